package worktree

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors. Callers test them with errors.Is; every error returned by this package that
// stems from one of these conditions wraps the matching sentinel.
var (
	// ErrGitTooOld: the git CLI is older than 2.38 (needed for `merge-tree --write-tree`).
	ErrGitTooOld = errors.New("git 2.38 or newer is required")
	// ErrNotRepository: the path given to Open is not inside a non-bare git repository.
	ErrNotRepository = errors.New("not a git repository with a working tree")
	// ErrDetachedHead: no target branch was given and the repository's HEAD is detached.
	ErrDetachedHead = errors.New("HEAD is detached: give a target branch")
	// ErrInvalidMissionID: a mission id does not match [A-Za-z0-9_-]{1,64} (bug case B31).
	ErrInvalidMissionID = errors.New("invalid mission id")
	// ErrInvalidAttempt: an attempt number is outside 1..MaxAttempt.
	ErrInvalidAttempt = errors.New("invalid attempt number")
	// ErrInvalidRef: a branch name or revision breaks git's ref-format rules or could be read
	// as an option (bug case B32). Nothing was run.
	ErrInvalidRef = errors.New("invalid branch name or revision")
	// ErrUnknownRef: a branch or commit does not exist in the repository.
	ErrUnknownRef = errors.New("unknown branch or commit")
	// ErrPathEscapes: a path built from user input would leave the data directory, possibly
	// through a symbolic link (bug case B31). Nothing was created.
	ErrPathEscapes = errors.New("path escapes the data directory")
	// ErrInvalidStrategy: an unknown workspace strategy, or a request field that the strategy
	// does not allow.
	ErrInvalidStrategy = errors.New("invalid workspace strategy")
	// ErrBranchCheckedOut: the branch a workspace needs is checked out in another worktree
	// (bug case B18). Nothing is left behind.
	ErrBranchCheckedOut = errors.New("branch is already checked out in another worktree")
	// ErrReadOnlyWorkspace: commit, land or remove was asked of a read-only workspace
	// (snapshot or main).
	ErrReadOnlyWorkspace = errors.New("workspace is read-only")
	// ErrWorkspaceGone: the workspace (or, for a resume, its branch) no longer exists.
	ErrWorkspaceGone = errors.New("workspace no longer exists")
	// ErrWorkspaceDirty: Remove without Force on a workspace with uncommitted changes.
	ErrWorkspaceDirty = errors.New("workspace has uncommitted changes")
	// ErrUnresolvedConflicts: the workspace still holds unmerged paths with conflict markers,
	// so its pending work is not committed.
	ErrUnresolvedConflicts = errors.New("workspace has unresolved merge conflicts")
	// ErrLockBusy: a git lock file (index.lock, HEAD.lock, <ref>.lock) stayed held by a live
	// process (open, or a live git working in that part of the repository), or could not be
	// proven stale, longer than Config.LockWait (bug case B16). The lock was left in place; the
	// message names it and why it was kept.
	ErrLockBusy = errors.New("git lock file is held by another process")
	// ErrTargetMoving: the target branch kept moving under the landing (another writer won
	// every compare-and-set); nothing was lost, the landing can be retried.
	ErrTargetMoving = errors.New("target branch kept changing during the landing")
	// ErrPushRefused: the remote refused the push that moves a remote repository's target for
	// a reason other than a moved target (a hook, permissions, a protected branch, the
	// network); the error carries git's *GitError with the remote's message. Nothing moved.
	ErrPushRefused = errors.New("the remote refused the push")
	// ErrRemoteFailed: a git process talking to a remote repository's URL (fetch, push,
	// ls-remote) failed for a reason other than a missing ref: the network, the server, a
	// partition, credentials. It may pass by itself; the error carries git's *GitError.
	ErrRemoteFailed = errors.New("talking to the remote failed")
	// ErrNotPublished: an attempt branch that another node made is not on the remote
	// repository (its node did not publish it: Publish), so this node cannot land or build on
	// it; the node that ran the attempt still can.
	ErrNotPublished = errors.New("the attempt branch is not on the remote")
	// ErrClosed: the Manager was closed.
	ErrClosed = errors.New("worktree manager is closed")
)

// GitError describes a git process that failed: its arguments (after the fixed `-C`/`-c`
// prefix), the directory it ran in, its exit code (-1 when it did not exit normally, e.g. a
// timeout) and its captured standard error (at most 8 KiB; standard output instead when git
// printed its message there and nothing on stderr). Use errors.As to read it.
type GitError struct {
	Dir      string   // the -C directory
	Args     []string // the git arguments after the fixed -C/-c prefix
	ExitCode int      // the exit status, -1 when git did not exit normally
	Stderr   string   // git's message
	Err      error    // the exec or context error
}

// Error renders "git <args>: exit N: <first lines of stderr>".
func (e *GitError) Error() string {
	msg := strings.TrimSpace(e.Stderr)
	if msg == "" && e.Err != nil {
		msg = e.Err.Error()
	}
	return fmt.Sprintf("git %s (in %s): exit %d: %s", strings.Join(e.Args, " "), e.Dir, e.ExitCode, msg)
}

// Unwrap returns the underlying exec or context error.
func (e *GitError) Unwrap() error { return e.Err }

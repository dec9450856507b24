package worktree

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Strategy says what kind of workspace an attempt gets (design brief §1).
type Strategy string

// Workspace strategies.
const (
	// StrategyWorktree (the default): a linked worktree outside the repository on the attempt's
	// own branch, created from the target tip.
	StrategyWorktree Strategy = "worktree"
	// StrategySnapshot: a read-only detached worktree of a given commit, for reviewers.
	StrategySnapshot Strategy = "snapshot"
	// StrategyMain: the repository's own checkout, read-only; nothing is created.
	StrategyMain Strategy = "main"
	// StrategyIsolatedCopy: a separate local clone (objects hard-linked where possible) on the
	// attempt's branch, for agents whose sandbox may not write outside the workspace directory
	// (a linked worktree's git data lives in the repository). Landing fetches its branch back.
	StrategyIsolatedCopy Strategy = "isolated_copy"
)

// Workspace is where one attempt works. The engine stores it (JSON, snake_case) and hands it
// back to CommitPending, Land, Remove and, as PrepareRequest.Resume, to the next attempt.
type Workspace struct {
	// Path is the absolute real path of the checkout.
	Path string `json:"path"`
	// Branch is the attempt's branch ("mcp-scheduler/<mission id>/a<attempt>"); for a resumed
	// attempt, its predecessor's. Empty for snapshots; the checked-out branch for StrategyMain.
	Branch string `json:"branch,omitempty"`
	// BaseCommit is the full commit id the workspace started from (the target tip, or the
	// start point or snapshot commit).
	BaseCommit string `json:"base_commit"`
	// Strategy is the kind of workspace.
	Strategy Strategy `json:"strategy"`
	// ReadOnly is true for snapshot and main: CommitPending, Land and Remove refuse them
	// (Remove accepts snapshots).
	ReadOnly bool `json:"read_only,omitempty"`
	// Resumed is true when the workspace is a predecessor's, continued (PrepareRequest.Resume)
	// or re-created on the same branch after its directory was deleted.
	Resumed bool `json:"resumed,omitempty"`
	// FromPool is true when the checkout was claimed from the warm pool.
	FromPool bool `json:"from_pool,omitempty"`
	// Conflicts lists the paths left with conflict markers by PrepareRequest.MergeTarget, for
	// the repair brief; empty when the merge was clean or not asked for.
	Conflicts []string `json:"conflicts,omitempty"`
	// RepoID, MissionID and Attempt identify whose workspace it is.
	RepoID    string `json:"repo_id"`
	MissionID string `json:"mission_id"`
	Attempt   int    `json:"attempt"`
	// TargetBranch is the branch the workspace was created from (informational).
	TargetBranch string `json:"target_branch,omitempty"`
	// CreatedAt is when the workspace was created (UTC).
	CreatedAt time.Time `json:"created_at"`
	// RemoteURL, for a remote-branch workspace (PrepareRemoteBranch), is the remote the
	// agent fetches Branch from and pushes its commits to; no directory exists at Path.
	RemoteURL string `json:"remote_url,omitempty"`
	// Notes are sentences for the agent and its caller about what this checkout holds
	// differently from the person's (fill.go): LFS files left as pointers, submodules left
	// empty and why, submodules populated from the module store; and tracked paths that
	// differ only by case where core.ignorecase is set (casefold.go, B67).
	Notes []string `json:"notes,omitempty"`
	// GitConfig are "key=value" settings the agent's own git must run with in this
	// workspace (the engine passes them as GIT_CONFIG_COUNT/KEY/VALUE): the LFS filter off
	// when git-lfs is not on the scheduler's PATH.
	GitConfig []string `json:"git_config,omitempty"`
}

// workspacePath returns DataDir/worktrees/<repo id>/<mission id>/a<attempt>, checked to stay
// under the worktree root after symbolic links are resolved (B31).
func (m *Manager) workspacePath(r *Repo, missionID string, attempt int) (string, error) {
	p := filepath.Join(m.root, r.id, missionID, "a"+strconv.Itoa(attempt))
	return underRoot(filepath.Join(m.root, r.id), p)
}

// metaPath is the sidecar file recording a completed workspace: <path>.json.
func metaPath(wsPath string) string { return wsPath + ".json" }

func writeMeta(ws Workspace) error {
	data, err := json.MarshalIndent(ws, "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomic(metaPath(ws.Path), data)
}

func readMeta(wsPath string) (Workspace, bool) {
	data, err := os.ReadFile(metaPath(wsPath))
	if err != nil {
		return Workspace{}, false
	}
	var ws Workspace
	if json.Unmarshal(data, &ws) != nil || ws.Path != wsPath {
		return Workspace{}, false
	}
	return ws, true
}

// checkOwned verifies that a workspace handed back by the engine lies under this repository's
// workspace directory and names a branch of ours; it returns the cleaned path.
func (m *Manager) checkOwned(r *Repo, ws Workspace) (string, error) {
	if ws.Strategy == StrategyMain {
		return "", fmt.Errorf("%w: the main checkout", ErrReadOnlyWorkspace)
	}
	if ws.Path == "" || !filepath.IsAbs(ws.Path) {
		return "", fmt.Errorf("%w: workspace path %q is not absolute", ErrPathEscapes, ws.Path)
	}
	p, err := underRoot(filepath.Join(m.root, r.id), ws.Path)
	if err != nil {
		return "", err
	}
	if ws.Branch != "" {
		if err := ValidateBranchName(ws.Branch); err != nil {
			return "", err
		}
		if !strings.HasPrefix(ws.Branch, BranchPrefix) {
			return "", fmt.Errorf("%w: %q is not a scheduler branch", ErrInvalidRef, ws.Branch)
		}
	}
	return p, nil
}

// verifyCheckout checks the post-conditions of a new workspace: HEAD on branch (or detached
// when branch is ""), HEAD at want, and a clean tree.
func (m *Manager) verifyCheckout(ctx context.Context, r *Repo, ws Workspace, want string) error {
	head, err := m.headOf(ctx, r, ws)
	if err != nil {
		return err
	}
	if head.branch != ws.Branch {
		return fmt.Errorf("post-condition: HEAD is on %q, want %q", head.branch, ws.Branch)
	}
	if head.commit != want {
		return fmt.Errorf("post-condition: HEAD is %s, want %s", head.commit, want)
	}
	entries, err := m.statusEntries(ctx, ws.Path)
	if err != nil {
		return err
	}
	if len(entries) > 0 {
		paths := make([]string, len(entries))
		for i, e := range entries {
			paths[i] = e.path
		}
		return fmt.Errorf("post-condition: new checkout is not clean: %s", strings.Join(paths, ", "))
	}
	return nil
}

type headInfo struct {
	branch string // "" when detached
	commit string
}

// headOf reads a workspace's HEAD: the symbolic ref from its HEAD file, the commit from the
// shared refs through go-git (linked worktrees) or from git (isolated copies).
func (m *Manager) headOf(ctx context.Context, r *Repo, ws Workspace) (headInfo, error) {
	gitDir, err := gitDirOf(ws.Path)
	if err != nil {
		return headInfo{}, err
	}
	data, err := os.ReadFile(filepath.Join(gitDir, "HEAD"))
	if err != nil {
		return headInfo{}, fmt.Errorf("read HEAD of %s: %w", ws.Path, err)
	}
	line := strings.TrimSpace(string(data))
	if ref, ok := strings.CutPrefix(line, "ref: refs/heads/"); ok {
		if ws.Strategy == StrategyIsolatedCopy {
			out, err := m.git.run(ctx, ws.Path, runOpts{readOnly: true}, "rev-parse", "--verify", "-q", "HEAD^{commit}")
			if err != nil {
				return headInfo{}, fmt.Errorf("read HEAD of %s: %w", ws.Path, err)
			}
			return headInfo{branch: ref, commit: strings.TrimSpace(string(out))}, nil
		}
		tip, err := r.branchTip(ref)
		if err != nil {
			return headInfo{}, err
		}
		return headInfo{branch: ref, commit: tip.String()}, nil
	}
	return headInfo{commit: line}, nil
}

// discard removes a workspace completely: registration, directory, sidecar and, when asked,
// the branch. It tolerates any part being missing already.
func (m *Manager) discard(ctx context.Context, r *Repo, path, branch string, deleteBranch bool) error {
	var errs []error
	if _, err := underRoot(m.cfg.DataDir, path); err != nil {
		return err
	}
	// A path replaced by a symbolic link names another directory: git would resolve it and
	// RemoveAll would at least drop the link; neither is ours to decide (B68).
	if err := refuseLinked(path); err != nil {
		return err
	}
	if _, err := m.git.run(ctx, r.root, runOpts{}, "worktree", "remove", "--force", "--force", "--end-of-options", path); err != nil {
		msg := stderrOf(err)
		if !strings.Contains(msg, "is not a working tree") && !strings.Contains(msg, "is a main working tree") {
			errs = append(errs, err)
		}
	}
	if err := os.RemoveAll(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		errs = append(errs, fmt.Errorf("remove %s: %w", path, err))
	}
	if err := os.Remove(metaPath(path)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		errs = append(errs, err)
	}
	if deleteBranch && branch != "" && strings.HasPrefix(branch, BranchPrefix) && r.hasBranch(branch) {
		if _, err := m.git.run(ctx, r.root, runOpts{}, "update-ref", "-m", "mcp-scheduler: remove workspace",
			"-d", "--end-of-options", "refs/heads/"+branch); err != nil {
			errs = append(errs, err)
		}
	}
	if parent := filepath.Dir(path); filepath.Dir(filepath.Dir(parent)) == m.root {
		_ = os.Remove(parent) // the mission directory, when it is now empty
	}
	return errors.Join(errs...)
}

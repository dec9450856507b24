package worktree

import (
	"context"
	"fmt"
	"strings"
)

// fetchTarget brings a remote repository's target branch to the remote's tip:
// `git fetch <url> +refs/heads/<target>:refs/heads/<target>` under the repository's fetch lock.
// The local branch of a remote repository only mirrors the remote's (no checkout holds it and
// only this fetch and a landing's push move it), so the fetch may force it. It does nothing
// for a local repository. Errors wrap ErrUnknownRef when the remote has no such branch, and
// carry git's *GitError otherwise (the network, credentials).
func (m *Manager) fetchTarget(ctx context.Context, r *Repo, target string) error {
	if r.remote == nil {
		return nil
	}
	release, err := m.locks.acquire(ctx, fetchKey(r.id))
	if err != nil {
		return err
	}
	defer release()
	ref := "refs/heads/" + target
	_, err = m.git.run(ctx, r.root, remoteOpts, "fetch", "--quiet", "--no-tags", "--no-write-fetch-head",
		"--end-of-options", r.remote.URL, "+"+ref+":"+ref)
	if err != nil {
		if strings.Contains(stderrOf(err), "couldn't find remote ref") {
			return fmt.Errorf("%w: branch %q is not on the remote %s (%s)", ErrUnknownRef, target, r.remote.Name, r.remote.URL)
		}
		return fmt.Errorf("fetch %s from the remote %s: %w: %w", target, r.remote.Name, ErrRemoteFailed, err)
	}
	return nil
}

// pushTarget moves a remote repository's target to l.Commit (step 6 of Land onto a remote)
// with a compare-and-set push: `git push --atomic --force-with-lease=refs/heads/<target>:<old>
// <url> <commit>:refs/heads/<target>`. The land lock is held. When the push fails the target is
// fetched again: at l.Commit, the push went through and only its answer was lost (landed); at
// another commit than l.OldTarget, the remote moved (again=true: the landing starts over, as
// for a local target that moved); still at l.OldTarget, the remote refused it (a hook,
// permissions, a protected branch): the error wraps ErrPushRefused and carries git's message.
func (m *Manager) pushTarget(ctx context.Context, r *Repo, target string, l Landing) (Landing, bool, error) {
	ref := "refs/heads/" + target
	_, pushErr := m.git.run(ctx, r.root, remoteOpts, "push", "--atomic", "--no-verify",
		"--force-with-lease="+ref+":"+l.OldTarget, "--end-of-options", r.remote.URL, l.Commit+":"+ref)
	if pushErr == nil {
		m.mirrorPushed(ctx, r, target, l)
		l.Status, l.NewTarget = LandLanded, l.Commit
		return l, false, nil
	}
	if ctx.Err() != nil {
		return l, false, ctx.Err()
	}
	if err := m.fetchTarget(ctx, r, target); err != nil {
		return l, false, fmt.Errorf("push %s to the remote %s: %w: %w (fetching it again then failed too: %v)",
			target, r.remote.Name, ErrPushRefused, pushErr, err)
	}
	now, err := r.branchTip(target)
	if err != nil {
		return l, false, err
	}
	switch now.String() {
	case l.Commit:
		m.log.Warn("the push's answer was lost but the remote holds the landing", "repository", r.remote.Name, "target", target, "commit", l.Commit, "err", pushErr)
		l.Status, l.NewTarget = LandLanded, l.Commit
		return l, false, nil
	case l.OldTarget:
		return l, false, fmt.Errorf("push %s to the remote %s: %w: %w", target, r.remote.Name, ErrPushRefused, pushErr)
	}
	m.log.Debug("the remote target moved before the push; starting over", "repository", r.remote.Name, "target", target,
		"expected", l.OldTarget, "now", now.String())
	return l, true, nil
}

// mirrorPushed moves the clone's target branch to what was pushed, unless a fetch moved it
// meanwhile (then it holds the push or something newer). A failure is only logged: the next
// fetch, before every workspace and landing, sets it anyway.
func (m *Manager) mirrorPushed(ctx context.Context, r *Repo, target string, l Landing) {
	release, err := m.locks.acquire(ctx, fetchKey(r.id))
	if err == nil {
		_, err = m.git.run(ctx, r.root, runOpts{}, "update-ref", "-m", "mcp-scheduler: pushed "+l.BranchTip,
			"--end-of-options", "refs/heads/"+target, l.Commit, l.OldTarget)
		release()
	}
	if err != nil && !m.targetMoved(r, target, l.OldTarget) {
		m.log.Warn("the clone's target branch was not moved to the pushed commit; the next fetch moves it",
			"repository", r.remote.Name, "target", target, "err", err)
	}
}

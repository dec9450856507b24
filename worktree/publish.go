package worktree

import (
	"context"
	"fmt"
	"os"
	"strings"
)

// An attempt's branch lives in the clone of the node that ran it. In cluster mode (several
// scheduler nodes, one git remote) the node publishes it to the remote when the attempt
// completes (Publish), so that any node can land it (LandRequest.Published: an Elsewhere
// landing fetches it first) or start a repair, review or verify mission from it (Prepare
// fetches a scheduler branch it lacks). A landing that settles the attempt (landed,
// already_landed, nothing_to_land) deletes the published branch again.

// Publish commits what the agent left uncommitted in the workspace (with message, as Land
// does) and pushes the attempt's branch to the repository's remote:
// `git push --no-verify <url> +refs/heads/<branch>:refs/heads/<branch>` (forced: the branch is
// the attempt's own). It returns the pushed tip (full hex). Errors: the repository is not a
// remote one; the workspace is not this manager's (ErrPathEscapes, ErrInvalidRef); git's
// *GitError when the push fails (the network, credentials, the remote's hook).
func (m *Manager) Publish(ctx context.Context, r *Repo, ws Workspace, message string) (string, error) {
	if err := m.checkOpen(); err != nil {
		return "", err
	}
	if r.remote == nil {
		return "", fmt.Errorf("publish %s: the repository is local: only a remote repository's attempt branches are published", ws.Branch)
	}
	if _, err := m.checkOwned(r, ws); err != nil {
		return "", fmt.Errorf("publish %s: %w", ws.Branch, err)
	}
	if _, err := os.Stat(ws.Path); err == nil {
		if _, err := m.commitPending(ctx, ws, message); err != nil {
			return "", fmt.Errorf("publish %s: commit pending work: %w", ws.Branch, err)
		}
		if ws.Strategy == StrategyIsolatedCopy {
			if err := m.fetchIsolated(ctx, r, ws); err != nil {
				return "", fmt.Errorf("publish %s: %w", ws.Branch, err)
			}
		}
	}
	tip, err := r.branchTip(ws.Branch)
	if err != nil {
		return "", fmt.Errorf("publish %s: %w", ws.Branch, err)
	}
	ref := "refs/heads/" + ws.Branch
	if _, err := m.git.run(ctx, r.root, remoteOpts, "push", "--quiet", "--no-verify", "--end-of-options",
		r.remote.URL, "+"+ref+":"+ref); err != nil {
		return "", fmt.Errorf("publish %s to the remote %s: %w: %w", ws.Branch, r.remote.Name, ErrRemoteFailed, err)
	}
	return tip.String(), nil
}

// fetchPublished brings an attempt branch another node published into this clone (forced:
// the remote's copy is the attempt's). Errors wrap ErrNotPublished when the remote has no
// such branch.
func (m *Manager) fetchPublished(ctx context.Context, r *Repo, branch string) error {
	if err := ValidateBranchName(branch); err != nil {
		return err
	}
	ref := "refs/heads/" + branch
	_, err := m.git.run(ctx, r.root, remoteOpts, "fetch", "--quiet", "--no-tags", "--no-write-fetch-head",
		"--end-of-options", r.remote.URL, "+"+ref+":"+ref)
	if err != nil {
		if strings.Contains(stderrOf(err), "couldn't find remote ref") {
			return fmt.Errorf("%w: %s is not on the remote %s (%s): the node that ran the attempt did not publish it; that node can still land it when it runs again",
				ErrNotPublished, branch, r.remote.Name, r.remote.URL)
		}
		return fmt.Errorf("fetch %s from the remote %s: %w: %w", branch, r.remote.Name, ErrRemoteFailed, err)
	}
	return nil
}

// fetchSchedulerBranch fetches rev from the remote when it names a scheduler branch this
// clone lacks (a repair mission's start point, a review's snapshot: branches of attempts
// another node ran). Anything else — a commit id, a branch present here, a local
// repository — is left to the caller's resolution.
func (m *Manager) fetchSchedulerBranch(ctx context.Context, r *Repo, rev string) error {
	if r.remote == nil || !strings.HasPrefix(rev, BranchPrefix) || r.hasBranch(rev) {
		return nil
	}
	return m.fetchPublished(ctx, r, rev)
}

// unpublish deletes a settled attempt's published branch from the remote
// (`git push --no-verify <url> --delete refs/heads/<branch>`) and, when the attempt ran on
// another node (elsewhere), the copy fetched into this clone. A branch already gone is not an
// error; any other failure is logged, not returned: the landing it follows is recorded either
// way, and the branch is only left over.
func (m *Manager) unpublish(ctx context.Context, r *Repo, branch string, elsewhere bool) {
	ref := "refs/heads/" + branch
	_, err := m.git.run(ctx, r.root, remoteOpts, "push", "--quiet", "--no-verify", "--end-of-options", r.remote.URL, ":"+ref)
	if err != nil && !strings.Contains(stderrOf(err), "remote ref does not exist") {
		m.log.Warn("the landed attempt's branch was not deleted from the remote; it is only left over",
			"repository", r.remote.Name, "branch", branch, "err", err)
	}
	if elsewhere && r.hasBranch(branch) {
		if _, err := m.git.run(ctx, r.root, runOpts{}, "update-ref", "-d", "--end-of-options", ref); err != nil {
			m.log.Warn("the fetched attempt branch was not deleted from this clone", "repository", r.remote.Name, "branch", branch, "err", err)
		}
	}
}

// settles reports whether a landing outcome ends what the attempt's branch is needed for.
func settles(s LandStatus) bool {
	return s == LandLanded || s == LandAlreadyLanded || s == LandNothingToLand
}

// fetchForLanding fetches a published attempt branch another node made (req.Elsewhere and
// req.Published, on a remote repository) before Land reads its tip. The land lock is held.
func (m *Manager) fetchForLanding(ctx context.Context, req LandRequest) error {
	if !req.Elsewhere || !req.Published || req.Repo.remote == nil {
		return nil
	}
	return m.fetchPublished(ctx, req.Repo, req.Workspace.Branch)
}

// fetchAllForLanding is fetchForLanding for every live request of a batch; it returns the
// requests still live, the others got their error.
func (m *Manager) fetchAllForLanding(ctx context.Context, reqs []LandRequest, live []int, out []BatchLanding) []int {
	kept := live[:0]
	for _, i := range live {
		if err := m.fetchForLanding(ctx, reqs[i]); err != nil {
			out[i].Err = fmt.Errorf("land %s a%d: %w", reqs[i].MissionID, reqs[i].Attempt, err)
			continue
		}
		kept = append(kept, i)
	}
	return kept
}

// unpublishSettled deletes a published attempt branch once a landing settled the attempt.
func (m *Manager) unpublishSettled(ctx context.Context, req LandRequest, status LandStatus) {
	if req.Published && req.Repo.remote != nil && settles(status) {
		m.unpublish(ctx, req.Repo, req.Workspace.Branch, req.Elsewhere)
	}
}

// PublishedBranch is one scheduler attempt branch on a remote repository.
type PublishedBranch struct {
	Branch    string // mcp-scheduler/<mission id>/a<attempt>
	MissionID string
	Attempt   int
}

// PublishedBranches lists the scheduler's attempt branches on the repository's remote
// (`git ls-remote --heads <url> refs/heads/mcp-scheduler/*`): published attempts and
// remote-branch workspaces. Names that are not attempt branches are left out. Errors: the
// repository is local; git's *GitError when the remote cannot be read.
func (m *Manager) PublishedBranches(ctx context.Context, r *Repo) ([]PublishedBranch, error) {
	if r.remote == nil {
		return nil, fmt.Errorf("list published branches: the repository %s is local", r.Name())
	}
	out, err := m.git.run(ctx, r.root, remoteOpts, "ls-remote", "--heads", "--end-of-options", r.remote.URL, "refs/heads/"+BranchPrefix+"*")
	if err != nil {
		return nil, fmt.Errorf("list published branches of the remote %s: %w", r.remote.Name, err)
	}
	var bs []PublishedBranch
	for _, line := range strings.Split(string(out), "\n") {
		_, ref, ok := strings.Cut(strings.TrimSpace(line), "\t")
		if !ok {
			continue
		}
		branch := strings.TrimPrefix(ref, "refs/heads/")
		if id, n, ok := parseAttemptBranch(branch); ok {
			bs = append(bs, PublishedBranch{Branch: branch, MissionID: id, Attempt: n})
		}
	}
	return bs, nil
}

// Unpublish deletes an attempt branch from the repository's remote (a published attempt whose
// result was refused, or one the sweep finds settled); a branch already gone is not an error,
// and a failure is logged (see unpublish). It does nothing for a local repository.
func (m *Manager) Unpublish(ctx context.Context, r *Repo, branch string) {
	if r.remote == nil || !strings.HasPrefix(branch, BranchPrefix) || ValidateBranchName(branch) != nil {
		return
	}
	m.unpublish(ctx, r, branch, false)
}

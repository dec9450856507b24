package scheduler

import (
	"context"
	"fmt"
	"os"

	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/worktree"
)

// verify checks, before a mission is reported completed, that its attempt's work still
// exists: the workspace directory, or commits on its branch. Read-only and shared workspaces
// (snapshot, main) always pass. A *domain.WorkspaceLostError otherwise: completing would land
// nothing and lose the work silently, so the attempt should fail and run again. Managed
// completions (supervise.go) and pull-mode ones (claim.go, PullService.Complete) both obey it.
func (ws *workspaces) verify(ctx context.Context, repository string, w worktree.Workspace) error {
	if w.Path == "" || w.ReadOnly || (w.Strategy != worktree.StrategyWorktree && w.Strategy != worktree.StrategyIsolatedCopy) {
		return nil
	}
	if _, err := os.Stat(w.Path); err == nil {
		return nil
	}
	if repo, err := ws.wt.Open(repository); err == nil && w.Branch != "" && w.BaseCommit != "" {
		if d, err := ws.wt.Diff(ctx, repo, w.BaseCommit, w.Branch); err == nil && len(d.Files) > 0 {
			return nil // the directory is gone but the work was committed on the branch
		}
	}
	return &domain.WorkspaceLostError{MissionID: w.MissionID, Attempt: w.Attempt, Path: w.Path}
}

// publish pushes a completed attempt's branch to its repository's remote before the
// completion is recorded, in cluster mode (Config.Node set) only: the attempt's branch is
// then on the remote for whichever node lands it (the leader lands a stopped node's work) or
// starts a repair or review from it (worktree.Manager.Publish). A local repository, a
// read-only or shared workspace, or a single node does nothing. A failed push is logged with
// what it means and the completion is recorded anyway: the work is safe in this node's clone,
// and this node still lands it; another node's landing then says the branch was not
// published (worktree.ErrNotPublished).
//
// It returns a function that deletes the published branch again, for a completion the engine
// then refuses (a stale epoch: the attempt's result is not used, so its branch must not stay
// on the remote); it does nothing when nothing was published.
func (ws *workspaces) publish(ctx context.Context, m *domain.Mission, w worktree.Workspace) (undo func()) {
	undo = func() {}
	if ws.cfg.Node == "" || w.Path == "" || w.ReadOnly || (w.Strategy != worktree.StrategyWorktree && w.Strategy != worktree.StrategyIsolatedCopy) {
		return undo
	}
	repo, err := ws.wt.Open(m.Repository)
	if err != nil {
		return undo // the landing reports an unusable repository
	}
	if _, ok := repo.Remote(); !ok {
		return undo
	}
	tip, err := ws.wt.Publish(ctx, repo, w, landMessage(m))
	if err != nil {
		ws.log.Warn("the attempt's branch was not pushed to the remote: only this node can land it", "mission_id", m.ID,
			"attempt", w.Attempt, "repository", m.Repository, "branch", w.Branch, "err", err)
		return undo
	}
	ws.log.Debug("attempt branch published", "mission_id", m.ID, "branch", w.Branch, "tip", tip)
	if w.RemoteURL != "" {
		return undo // the remote-branch workspace's branch is the agent's, not ours to take back
	}
	return func() {
		ws.log.Info("the attempt's completion was refused: its published branch is deleted from the remote", "mission_id", m.ID, "branch", w.Branch)
		ws.wt.Unpublish(ctx, repo, w.Branch)
	}
}

// refusedUnpublish runs undo (publish's) when err refuses the completion itself (lease lost,
// an illegal transition): the attempt's result is not used. Other errors (the database) leave
// the branch: the completion is tried again.
func refusedUnpublish(err error, undo func()) {
	if err != nil && domain.CallerError(err) {
		undo()
	}
}

// landMessage is the message of an attempt's merge commit and of the commit of the work the
// agent left uncommitted (worktree.LandRequest.Message).
func landMessage(m *domain.Mission) string {
	return fmt.Sprintf("%s\n\nMission %s: %s", m.Title, m.ID, firstLine(m.Brief))
}

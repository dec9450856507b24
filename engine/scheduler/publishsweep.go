package scheduler

import (
	"context"
	"errors"

	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/worktree"
)

// sweepPublished deletes, from every remote repository this node knows, the attempt branches
// nothing needs any more (publishedNeeded): the leftovers of a node that died between
// publishing and recording a completion, of a remote-branch attempt that failed, of a landing
// whose delete failed, of missions pruned from the history. It is the leader's part of the
// scheduled pass (one ls-remote per remote repository); a remote that cannot be read is
// logged and tried at the next pass. It returns how many branches it deleted.
func (ws *workspaces) sweepPublished(ctx context.Context) int {
	if ws.leads != nil && !ws.leads() {
		return 0
	}
	roots, err := ws.wt.KnownRepositories()
	if err != nil {
		ws.log.Warn("published branches not swept: the repositories could not be listed", "err", err)
		return 0
	}
	deleted := 0
	for _, root := range roots {
		repo, err := ws.wt.Open(root)
		if err != nil {
			continue // the workspace cleanup reports it
		}
		if _, ok := repo.Remote(); !ok {
			continue
		}
		bs, err := ws.wt.PublishedBranches(ctx, repo)
		if err != nil {
			ws.log.Warn("published branches not swept: the remote could not be read; the next pass tries again", "repository", repo.Name(), "err", err)
			continue
		}
		for _, b := range bs {
			if ws.publishedNeeded(ctx, b) {
				continue
			}
			ws.log.Info("deleting a leftover attempt branch from the remote", "repository", repo.Name(), "branch", b.Branch)
			ws.wt.Unpublish(ctx, repo, b.Branch)
			deleted++
		}
	}
	return deleted
}

// publishedNeeded says whether an attempt branch on a remote is still needed: it is the
// mission's current attempt and the mission runs, or completed without its landing settled
// (queued, waiting for approval, conflicted, left for a person: the branch is what lands or
// is looked at). A superseded attempt, a mission that failed or was cancelled, a settled
// landing, a mission no longer stored (or an id no mission can have) need it no more. When the mission cannot be read
// the branch is kept.
func (ws *workspaces) publishedNeeded(ctx context.Context, b worktree.PublishedBranch) bool {
	d, err := ws.eng.GetMission(ctx, b.MissionID)
	if errors.Is(err, domain.ErrNotFound) || errors.Is(err, domain.ErrUnknownMission) || errors.Is(err, domain.ErrInvalid) {
		return false
	}
	if err != nil {
		return true
	}
	m := d.Mission
	switch {
	case b.Attempt != m.Attempt:
		return false
	case m.State.Leased():
		return true
	case m.State == domain.StateCompleted:
		return !m.Landing.Satisfies()
	}
	return m.State == domain.StatePending || m.State == domain.StateBlocked // its attempt may be looked at or resumed
}

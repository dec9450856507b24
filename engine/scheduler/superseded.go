package scheduler

import (
	"context"
	"os"
	"path/filepath"
	"time"

	"github.com/mcp-scheduler/mcp-scheduler/agent/runner"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// supersededWorktree says what becomes of a superseded attempt's workspace: nothing at once.
// Its commits are not landed; the scheduled workspace cleanup removes it when the mission is
// finished (landed, cancelled or purged), like any other attempt's.
const supersededWorktree = "left in place, not landed: the workspace cleanup removes it once the mission is finished"

// currentLeaseWait bounds the read of the mission's current lease for the warning.
const currentLeaseWait = 5 * time.Second

// warnSuperseded logs, at warn, that the attempt a ran is no longer the mission's: its lease
// was lost (reaped after it expired, taken over by another node or process under a newer
// epoch, cancelled) and its result is not used. It names the attempt and the epoch it held,
// the mission's current epoch, attempt, state and owner (node), and what becomes of the
// workspace. A refusal of a result this attempt recorded itself (a repeated try after a lost
// answer) is not a superseded attempt and logs nothing; a cancelled mission logs at info.
func (sv *supervisor) warnSuperseded(ctx context.Context, a *attemptRun, refused error) {
	attrs := []any{"mission_id", a.fence.MissionID, "attempt", a.mission.Attempt, "held_epoch", a.fence.Epoch,
		"worktree", a.rec.Worktree.Path, "worktree_fate", supersededWorktree}
	if refused != nil {
		attrs = append(attrs, "refused", refused.Error())
	}
	rctx, cancel := context.WithTimeout(ctx, currentLeaseWait) // a log line must not wait on a database that is away
	defer cancel()
	m, err := sv.eng.Mission(rctx, a.fence.MissionID)
	switch {
	case err == nil && m.Lease.Epoch == a.fence.Epoch && m.State == domain.StateCompleted:
		return // this attempt's own result, recorded by an earlier try
	case err == nil && m.State == domain.StateCancelled:
		sv.log.Info("attempt stopped: the mission was cancelled, its result is not used", attrs...)
		return
	}
	sv.log.Warn("superseded attempt: its lease is no longer the mission's, its result is not used",
		append(attrs, currentLease(m, err)...)...)
}

// currentLease is the log attributes of the mission's current lease (or why it is unknown).
func currentLease(m domain.Mission, err error) []any {
	if err != nil {
		return []any{"current", "unknown: " + err.Error()}
	}
	return []any{"current_epoch", m.Lease.Epoch, "current_attempt", m.Attempt, "state", m.State,
		"owner_node", m.Node, "owner", m.Lease.Owner}
}

// warnSupersededOnRestart logs, at warn, every earlier attempt of m that this node launched
// (its attempt directory under this data dir shows a launch) while m's current attempt is
// another node's: after a restart this node found its own attempt superseded, so it neither
// re-attaches it nor collects its result (recover). exit_recorded false means the agent may
// still run (its shim outlives the scheduler); it is not this node's to stop by the lease.
func (r *recovery) warnSupersededOnRestart(ctx context.Context, m domain.Mission) {
	for k := 1; k < m.Attempt; k++ {
		dir, err := r.run.AttemptDir(m.ID, k)
		if err != nil || !started(dir) {
			continue
		}
		_, exitErr := os.Stat(filepath.Join(dir, runner.FileExit))
		r.log.Warn("superseded attempt found on restart: another node holds the mission now, this node's result is not used",
			"mission_id", m.ID, "attempt", k, "held_epoch", r.heldEpoch(ctx, m.ID, k), "node", r.cfg.Node,
			"attempt_dir", dir, "exit_recorded", exitErr == nil, "current_epoch", m.Lease.Epoch,
			"current_attempt", m.Attempt, "owner_node", m.Node, "worktree_fate", supersededWorktree)
	}
}

// heldEpoch is the epoch attempt k of mission id held, from its attempt record (0: unknown).
func (r *recovery) heldEpoch(ctx context.Context, id string, k int) int64 {
	d, err := r.eng.GetMission(ctx, id)
	if err != nil {
		return 0
	}
	for _, a := range d.Attempts {
		if a.Attempt == k {
			return a.Epoch
		}
	}
	return 0
}

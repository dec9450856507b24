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
// (its attempt directory under this data dir shows a launch) and lost by its lease — reaped
// after it expired, or given up by the fence — while m's current attempt is another node's:
// after a restart this node found its own attempt superseded, so it neither re-attaches it
// nor collects its result (recover). Attempts that ended with their own result (completed,
// failed, blocked …) are not superseded and log nothing. exit_recorded false means the agent
// may still run (its shim outlives the scheduler).
func (r *recovery) warnSupersededOnRestart(ctx context.Context, m domain.Mission) {
	var attempts []domain.Attempt // read once, when this node has an earlier attempt of m
	for k := 1; k < m.Attempt; k++ {
		dir, err := r.run.AttemptDir(m.ID, k)
		if err != nil || !started(dir) {
			continue
		}
		if attempts == nil {
			attempts = r.attempts(ctx, m.ID)
		}
		a, known := attemptOf(attempts, k)
		if known && !lostByLease(a) {
			continue
		}
		_, exitErr := os.Stat(filepath.Join(dir, runner.FileExit))
		r.log.Warn("superseded attempt found on restart: another node holds the mission now, this node's result is not used",
			"mission_id", m.ID, "attempt", k, "held_epoch", a.Epoch, "node", r.cfg.Node,
			"attempt_dir", dir, "exit_recorded", exitErr == nil, "current_epoch", m.Lease.Epoch,
			"current_attempt", m.Attempt, "owner_node", m.Node, "worktree_fate", supersededWorktree)
	}
}

// attempts reads mission id's attempt records (none when they cannot be read: the warning
// then says held_epoch 0).
func (r *recovery) attempts(ctx context.Context, id string) []domain.Attempt {
	d, err := r.eng.GetMission(ctx, id)
	if err != nil || d.Attempts == nil {
		return []domain.Attempt{}
	}
	return d.Attempts
}

// attemptOf finds attempt k among as.
func attemptOf(as []domain.Attempt, k int) (domain.Attempt, bool) {
	for _, a := range as {
		if a.Attempt == k {
			return a, true
		}
	}
	return domain.Attempt{}, false
}

// lostByLease reports whether an attempt ended because its lease ran out (the reaper's crash
// failure or an abandon) or could not be renewed (the fence), not with a result of its own.
func lostByLease(a domain.Attempt) bool {
	return a.Outcome == domain.OutcomeAbandoned || (a.Outcome == domain.OutcomeFailed && a.Failure != nil && a.Failure.Tool == "lease")
}

package scheduler

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
	"github.com/mcp-scheduler/mcp-scheduler/agent/adapters"
	"github.com/mcp-scheduler/mcp-scheduler/agent/runner"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// recover runs when this process becomes the leader: every leased or running mission whose
// attempt a managed agent ran is found again from its attempt directory. An agent still
// running (same PID and start time) is re-attached and supervised; one that ended while no
// scheduler watched has its result collected from its files; one that is gone without a
// record is reported lost (retried, or interrupted with its checkpoint). Pull-mode attempts
// keep their leases, which expire on their own.
func (s *Scheduler) recover(ctx context.Context) (int, error) {
	leased, err := s.eng.Leased(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	var errs []error
	for i := range leased {
		m := leased[i]
		if s.alive(m) {
			continue
		}
		ok, err := s.reattach(ctx, m)
		if err != nil {
			errs = append(errs, fmt.Errorf("recover %s: %w", m.ID, err))
		}
		if ok {
			n++
		}
	}
	s.mu.Lock()
	s.recovered = len(errs) == 0
	s.mu.Unlock()
	return n, errors.Join(errs...)
}

// reattach finds one managed attempt again; it reports whether it adopted one.
func (s *Scheduler) reattach(ctx context.Context, m domain.Mission) (bool, error) {
	rec, err := s.runWith(ctx, &m)
	if err != nil {
		return false, err
	}
	if rec.Mode == ModePull {
		return false, nil
	}
	if rec.Attempt != m.Attempt { // leased, but the crash came before the run record was written
		rec = RunRecord{Mode: ModeManaged, Attempt: m.Attempt, Profile: m.Profile}
	}
	prof, known := s.cfg.profile(orDefault(rec.Profile, m.Profile))
	if !known && rec.Runtime == "" {
		if _, configured := s.cfg.profile(m.Profile); !configured && rec.Mode == "" {
			return false, nil // an external agent's lease (no run record yet): it expires on its own
		}
	}
	if !known {
		prof = agent.Profile{Name: orDefault(rec.Profile, m.Profile), Runtime: agent.Runtime(rec.Runtime)}.WithDefaults()
	}
	dir, err := s.run.AttemptDir(m.ID, m.Attempt)
	if err != nil {
		return false, err
	}
	if !started(dir) { // nothing was launched for this attempt: give the mission back
		return false, ignoreLost(s.eng.Release(ctx, m.Fence(), "the scheduler restarted before launching the agent"))
	}
	if rec.Worktree.Path == "" {
		// Launched, but the crash came before the run record named its workspace: Prepare is
		// idempotent per attempt and returns the workspace the agent was started in, so its
		// work can still land.
		ws, err := s.prepare(ctx, &m)
		if err != nil {
			return false, fmt.Errorf("find the workspace of attempt %d: %w", m.Attempt, err)
		}
		rec.Worktree = ws
	}
	ad, err := adapters.For(prof.Runtime)
	if err != nil {
		return false, err
	}
	proc, err := s.run.Attach(ctx, runner.Spec{Adapter: ad, Profile: prof, AttemptDir: dir,
		Request: agent.LaunchRequest{Start: agent.Start{MissionID: m.ID, Attempt: m.Attempt, Epoch: m.Lease.Epoch}}})
	if err != nil {
		return false, err
	}
	// The lease may have run low (or out) while no scheduler led: start or renew it before the
	// agent is supervised, so its fence starts from a fresh expiry.
	var expires time.Time
	if m.State == domain.StateLeased {
		started, err := s.eng.Start(ctx, m.Fence())
		if err != nil {
			proc.Detach()
			return false, ignoreLost(err)
		}
		expires = started.Lease.ExpiresAt
	} else {
		ans, err := s.eng.RenewLease(ctx, m.Fence())
		if err != nil {
			proc.Detach()
			return false, ignoreLost(err)
		}
		expires = ans.ExpiresAt
	}
	rec.AttemptDir, rec.Profile, rec.Runtime = dir, prof.Name, string(prof.Runtime)
	if rec.PID == 0 {
		rec.PID, rec.AgentStart, rec.LaunchedAt = proc.PID(), proc.Record().AgentStart, s.cfg.Now()
		if err := s.eng.SetRun(ctx, m.Fence(), rec.raw(), rec.workspace()); err != nil {
			proc.Detach()
			return false, ignoreLost(err)
		}
	}
	s.log.Info("re-attached agent", "mission_id", m.ID, "attempt", m.Attempt, "pid", proc.PID())
	s.adopt(ctx, &attemptRun{fence: m.Fence(), mission: m, rec: rec, proc: proc, profile: prof}, expires)
	return true, nil
}

// started reports whether the runner left a trace of a launch in dir (pid.json or exit.json).
func started(dir string) bool {
	for _, f := range []string{runner.FilePID, runner.FileExit} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			return true
		}
	}
	return false
}

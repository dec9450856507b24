package scheduler

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
	"github.com/mcp-scheduler/mcp-scheduler/agent/adapters"
	"github.com/mcp-scheduler/mcp-scheduler/agent/runner"
	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/worktree"
)

// recovery is the recovery and reaper service: what the leader finds that nobody watches.
// On becoming leader (once per leadership epoch, until a pass succeeds) every leased or
// running mission whose attempt a managed agent ran is found again from its attempt
// directory: an agent still running (same PID and start time) is re-attached and handed to
// the supervisor, which owns it from then on; one that ended while no scheduler watched has
// its result collected from its files; one that is gone without a record is reported lost
// (retried, or interrupted with its checkpoint). Pull-mode attempts keep their leases, which
// expire on their own. Every step then reaps the expired leases of attempts this process
// does not supervise and raises missed deadlines. It starts no goroutine: RunOnce is a step
// of the leader's tick, and what it re-attaches the supervisor runs and stops.
type recovery struct {
	eng     *engine.Engine
	run     *runner.Runner
	cfg     Config
	log     *slog.Logger
	sup     *supervisor
	prepare func(ctx context.Context, m *domain.Mission) (worktree.Workspace, error) // workspaces.prepare

	mu        sync.Mutex
	recovered bool // the re-attach pass succeeded under the current leadership epoch
}

// RecoveryReport is what one recovery step did.
type RecoveryReport struct {
	Recovered int      // attempts re-attached (or collected) by the re-attach pass; 0 when none ran
	Reaped    []string // missions whose expired lease was reaped
}

func newRecovery(eng *engine.Engine, run *runner.Runner, cfg Config, sup *supervisor,
	prepare func(context.Context, *domain.Mission) (worktree.Workspace, error)) *recovery {
	return &recovery{eng: eng, run: run, cfg: cfg, log: cfg.Logger, sup: sup, prepare: prepare}
}

// pending reports whether the re-attach pass is still to run under this leadership.
func (r *recovery) pending() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return !r.recovered
}

// reset makes the next RunOnce run the re-attach pass again (a new leadership epoch, or
// leadership lost: another leader may have changed everything meanwhile).
func (r *recovery) reset() {
	r.mu.Lock()
	r.recovered = false
	r.mu.Unlock()
}

// RunOnce is one recovery step: the re-attach pass when pending, then, when cluster (the
// cluster-wide duties are this process's: the leader), the reaper (expired leases of attempts
// the supervisor neither supervises nor launches) and missed deadlines. The errors of its
// parts are joined; a re-attach pass with an error runs again next step.
func (r *recovery) RunOnce(ctx context.Context, cluster bool) (RecoveryReport, error) {
	var rep RecoveryReport
	var errs []error
	if r.pending() {
		n, err := r.recover(ctx)
		rep.Recovered = n
		errs = append(errs, err)
	}
	if !cluster {
		return rep, errors.Join(errs...)
	}
	reaped, err := r.eng.ReapExpired(ctx, r.sup.alive)
	rep.Reaped = reaped
	errs = append(errs, err)
	_, err = r.eng.EscalateMissedDeadlines(ctx)
	return rep, errors.Join(append(errs, err)...)
}

// recover is the re-attach pass; it returns how many attempts it adopted.
func (r *recovery) recover(ctx context.Context) (int, error) {
	leased, err := r.eng.Leased(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	var errs []error
	for i := range leased {
		m := leased[i]
		if r.sup.alive(m) {
			continue // supervised already
		}
		if r.cfg.Node != "" && m.Node != r.cfg.Node {
			r.warnSupersededOnRestart(ctx, m) // another node's: in cluster mode only the node that leased it re-attaches
			continue
		}
		ok, err := r.reattach(ctx, m)
		if err != nil {
			errs = append(errs, fmt.Errorf("recover %s: %w", m.ID, err))
		}
		if ok {
			n++
		}
	}
	errs = append(errs, r.stopStrays(ctx))
	r.mu.Lock()
	r.recovered = errors.Join(errs...) == nil
	r.mu.Unlock()
	return n, errors.Join(errs...)
}

// reattach finds one managed attempt again; it reports whether it adopted one.
func (r *recovery) reattach(ctx context.Context, m domain.Mission) (bool, error) {
	rec, err := runWith(ctx, r.eng, &m)
	if err != nil {
		return false, err
	}
	if rec.Mode == ModePull {
		return false, nil
	}
	if rec.Attempt != m.Attempt { // leased, but the crash came before the run record was written
		rec = RunRecord{Mode: ModeManaged, Attempt: m.Attempt, Profile: m.Profile}
	}
	prof, known := r.cfg.profile(orDefault(rec.Profile, m.Profile))
	if !known && rec.Runtime == "" {
		if _, configured := r.cfg.profile(m.Profile); !configured && rec.Mode == "" {
			return false, nil // an external agent's lease (no run record yet): it expires on its own
		}
	}
	if !known {
		prof = agent.Profile{Name: orDefault(rec.Profile, m.Profile), Runtime: agent.Runtime(rec.Runtime)}.WithDefaults()
	}
	dir, err := r.run.AttemptDir(m.ID, m.Attempt)
	if err != nil {
		return false, err
	}
	if !started(dir) { // nothing was launched for this attempt: give the mission back
		return false, ignoreLost(r.eng.Release(ctx, m.Fence(), "the scheduler restarted before launching the agent"))
	}
	if rec.Worktree.Path == "" {
		// Launched, but the crash came before the run record named its workspace: Prepare is
		// idempotent per attempt and returns the workspace the agent was started in, so its
		// work can still land.
		ws, err := r.prepare(ctx, &m)
		if err != nil {
			return false, fmt.Errorf("find the workspace of attempt %d: %w", m.Attempt, err)
		}
		rec.Worktree = ws
	}
	ad, err := adapters.For(prof.Runtime)
	if err != nil {
		return false, err
	}
	proc, err := r.run.Attach(ctx, runner.Spec{Adapter: ad, Profile: prof, AttemptDir: dir,
		Request: agent.LaunchRequest{Start: agent.Start{MissionID: m.ID, Attempt: m.Attempt, Epoch: m.Lease.Epoch}}})
	if err != nil {
		return false, err
	}
	// The lease may have run low (or out) while no scheduler led: start or renew it before the
	// agent is supervised, so its fence starts from a fresh expiry.
	var expires time.Time
	if m.State == domain.StateLeased {
		started, err := r.eng.Start(ctx, m.Fence())
		if err != nil {
			proc.Detach()
			return false, ignoreLost(err)
		}
		expires = started.Lease.ExpiresAt
	} else {
		ans, err := r.eng.RenewLease(ctx, m.Fence())
		if err != nil {
			proc.Detach()
			return false, ignoreLost(err)
		}
		expires = ans.ExpiresAt
	}
	rec.AttemptDir, rec.Profile, rec.Runtime = dir, prof.Name, string(prof.Runtime)
	if rec.PID == 0 {
		rec.PID, rec.AgentStart, rec.LaunchedAt = proc.PID(), proc.Record().AgentStart, r.cfg.Now()
		if err := r.eng.SetRun(ctx, m.Fence(), rec.raw(), rec.workspace()); err != nil {
			proc.Detach()
			return false, ignoreLost(err)
		}
	}
	r.log.Info("re-attached agent", "mission_id", m.ID, "attempt", m.Attempt, "pid", proc.PID())
	r.sup.adopt(ctx, &attemptRun{fence: m.Fence(), mission: m, rec: rec, proc: proc, profile: prof}, expires)
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

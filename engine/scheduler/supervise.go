package scheduler

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cenkalti/backoff/v5"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
	"github.com/mcp-scheduler/mcp-scheduler/agent/runner"
	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// attemptRun is one managed attempt this process supervises.
type attemptRun struct {
	fence   domain.Fence
	mission domain.Mission
	rec     RunRecord
	proc    *runner.Process
	profile agent.Profile

	mu         sync.Mutex
	lastBeat   time.Time      // last lease renewal sent to the engine
	expires    time.Time      // the lease expiry the last successful start or renewal returned
	fenceTimer *time.Timer    // stops the agent before an unrenewed lease expires (leases.go)
	fenced     bool           // the fence fired: the lease could not be renewed in time
	detached   bool           // no longer watched by this process
	yielded    bool           // the agent sent task.yield and the engine recorded it
	stopping   string         // why this scheduler stopped it ("" while not)
	budget     *engine.Breach // the hard budget its spend crossed (budget.go); it is being stopped
	parallel   atomic.Bool
	startedAt  time.Time
	// rateLimited: the agent reported a rejected rate-limit window (task.rate_limit) during
	// this attempt, so a rate_limit failure need not record one (ratelimit.go).
	rateLimited atomic.Bool
}

// adopt registers a launched or re-attached attempt, whose lease runs until expires, and
// supervises it until it ends.
func (sv *supervisor) adopt(ctx context.Context, a *attemptRun, expires time.Time) {
	a.startedAt = sv.cfg.Now()
	a.lastBeat = a.startedAt
	sv.renewed(a, expires)
	sv.mu.Lock()
	sv.procs[a.fence.MissionID] = a
	stopped := sv.stopped
	sv.mu.Unlock()
	sv.cfg.Metrics.AgentProcess(runProfile(a), true)
	sv.watchers.Add(1)
	go func() {
		defer sv.watchers.Done()
		sv.supervise(context.WithoutCancel(ctx), a)
	}()
	if stopped {
		a.detach() // shutting down: the agent goes on, the next leader collects it
	}
}

// supervise turns the agent's events into engine calls until it ends, then collects its
// outcome. Any event is proof of life and renews the lease (at most once a second); a lost
// lease stops the agent before anyone else can get the mission's next attempt.
func (sv *supervisor) supervise(ctx context.Context, a *attemptRun) {
	defer func() {
		a.ended()
		sv.mu.Lock()
		if sv.procs[a.fence.MissionID] == a {
			delete(sv.procs, a.fence.MissionID)
		}
		sv.mu.Unlock()
		sv.cfg.Metrics.AgentProcess(runProfile(a), false)
		sv.host.wake()
	}()
	for ev := range a.proc.Events() {
		if err := sv.onEvent(ctx, a, ev); errors.Is(err, domain.ErrLeaseLost) {
			sv.stopAsync(a, runner.ReasonLeaseLost)
		} else if err != nil && !domain.CallerError(err) {
			sv.log.Warn("agent event not recorded", "mission_id", a.fence.MissionID, "err", err)
		}
	}
	out := a.proc.Wait()
	if out.Detached {
		return // the agent goes on unwatched; the next leader collects it
	}
	switch err := sv.record(ctx, a, out); {
	case errors.Is(err, domain.ErrLeaseLost):
		sv.warnSuperseded(ctx, a, err)
	case err != nil:
		sv.log.Error("result not recorded", "mission_id", a.fence.MissionID, "err", err)
	}
}

// record collects the attempt's outcome, again and again while the database is unavailable
// (domain.ErrStoreUnavailable: a PostgreSQL server that went away), with backoff from
// recordRetryFirst to recordRetryMax, until it is recorded, fails otherwise, or ctx ends:
// an agent's result must not be lost to an outage. A repeat is safe: every transition is
// guarded by the attempt's epoch (a commit that went through before its answer was lost
// makes the repeat a lost-lease or illegal-transition error, nothing twice).
func (sv *supervisor) record(ctx context.Context, a *attemptRun, out runner.Outcome) error {
	b := backoff.NewExponentialBackOff()
	b.InitialInterval, b.MaxInterval = recordRetryFirst, recordRetryMax
	for {
		err := sv.collect(ctx, a, out)
		if !errors.Is(err, domain.ErrStoreUnavailable) {
			return err
		}
		sv.log.Warn("result not recorded yet: the database is unavailable; retrying", "mission_id", a.fence.MissionID, "err", err)
		select {
		case <-ctx.Done():
			return err
		case <-time.After(b.NextBackOff()):
		}
	}
}

// The pauses between tries to record an attempt's outcome while the database is unavailable.
const (
	recordRetryFirst = 250 * time.Millisecond
	recordRetryMax   = 5 * time.Second
)

func (sv *supervisor) onEvent(ctx context.Context, a *attemptRun, ev runner.Event) error {
	if ev.FromAgent() {
		if err := sv.beat(ctx, a); err != nil {
			return err
		}
	}
	if ev.Kind == runner.EventStalled {
		return sv.stalled(ctx, a, ev)
	}
	if ev.Kind != runner.EventMessage {
		return nil
	}
	msg := ev.Message
	switch msg.Type {
	case agent.TypeProgress:
		return sv.eng.Progress(ctx, a.fence, msg.Percent, msg.Message)
	case agent.TypeCheckpoint:
		return sv.eng.Checkpoint(ctx, a.fence, msg.Checkpoint, msg.Message)
	case agent.TypeRateLimit:
		return sv.rateLimit(ctx, a, msg.RateLimit)
	case agent.TypeUsage:
		return sv.onUsage(ctx, a, msg)
	case agent.TypeYield:
		wait := ""
		if msg.Reason == engine.WaitChildren {
			wait = engine.WaitChildren
		}
		if err := sv.eng.Yield(ctx, a.fence, msg.Checkpoint, msg.Reason, wait); err != nil {
			return err
		}
		a.mu.Lock()
		a.yielded = true
		a.mu.Unlock()
	}
	return nil
}

// beat renews the lease at most once a second per attempt.
func (sv *supervisor) beat(ctx context.Context, a *attemptRun) error {
	now := sv.cfg.Now()
	a.mu.Lock()
	due := now.Sub(a.lastBeat) >= time.Second
	if due {
		a.lastBeat = now
	}
	a.mu.Unlock()
	if !due {
		return nil
	}
	ans, err := sv.eng.Heartbeat(ctx, a.fence)
	if err == nil {
		sv.renewed(a, ans.ExpiresAt)
	}
	return err
}

// stopAsync stops the agent without blocking the event reader (Stop waits for the process
// group to be gone while the runner may wait for us to read).
func (sv *supervisor) stopAsync(a *attemptRun, reason string) {
	a.mu.Lock()
	first := a.stopping == ""
	if first {
		a.stopping = reason
	}
	a.mu.Unlock()
	if !first {
		return
	}
	sv.watchers.Add(1) // Stop waits for the stop too
	go func() {
		defer sv.watchers.Done()
		if err := a.proc.Stop(reason); err != nil {
			sv.log.Error("agent did not stop", "mission_id", a.fence.MissionID, "reason", reason, "err", err)
		}
	}()
}

// collect records how an attempt ended: completed, failed (with the retry policy), blocked, or
// nothing when the mission was no longer ours.
func (sv *supervisor) collect(ctx context.Context, a *attemptRun, out runner.Outcome) error {
	sv.host.phase(PhaseCollecting)
	a.mu.Lock()
	yielded, stopping, fenced, breach := a.yielded, a.stopping, a.fenced, a.budget
	a.mu.Unlock()
	if fenced { // stopped because the lease could not be renewed: give the mission back, result unused
		f := domain.Failure{Kind: domain.FailureCrash, Tool: "lease",
			Summary: "the lease could not be renewed in time: the agent was stopped before it expired"}
		_, err := sv.eng.Fail(ctx, a.fence, engine.FailRequest{Failure: f, Summary: f.Summary, ParallelInRepo: a.parallel.Load()})
		return err
	}
	if yielded || stopping == runner.ReasonLeaseLost || stopping == runner.ReasonCancelled {
		if stopping == runner.ReasonLeaseLost && !yielded {
			sv.warnSuperseded(ctx, a, nil) // stopped because its lease was no longer the mission's
		}
		return nil // the engine already knows (yield), or the result must not be used
	}
	res := engine.ResultFromWire(out.Result)
	res.Usage = sv.price(a, res.Usage)
	if breach != nil && stopping == ReasonBudget {
		return sv.failBudget(ctx, a, *breach, res)
	}
	switch res.Status {
	case domain.ResultCompleted:
		if err := sv.host.verify(ctx, a.mission.Repository, a.rec.Worktree); err != nil {
			f := domain.Failure{Kind: domain.FailureWorkspace, Diagnostic: err.Error(), Summary: "the workspace was lost before the work was committed"}
			_, err := sv.eng.Fail(ctx, a.fence, engine.FailRequest{Failure: f, Usage: res.Usage, Summary: res.Summary})
			return err
		}
		undo := sv.host.publish(ctx, &a.mission, a.rec.Worktree)
		sv.rateRoom(ctx, a)
		_, err := sv.eng.Complete(ctx, a.fence, res)
		refusedUnpublish(err, undo)
		return err
	case domain.ResultBlocked:
		epoch := a.fence.Epoch
		reason := orDefault(res.Summary, "the agent needs a decision")
		_, err := sv.eng.Block(ctx, engine.BlockRequest{MissionID: a.fence.MissionID, Epoch: &epoch, Kind: "decision",
			Reason: reason, DecisionRequired: orDefault(res.Decision, reason), Evidence: res.Evidence,
			SafeNextStep: "resolve_escalation with action retry once decided"}, a.profile.Name)
		return err
	}
	failure := domain.Failure{Kind: domain.FailureCrash, Summary: "the agent ended without a result"}
	if res.Failure != nil {
		failure = withProfile(*res.Failure, a.profile.Name)
	}
	if res.Status == domain.ResultCancelled && stopping == "" {
		failure.Kind, failure.Summary = domain.FailureError, orDefault(res.Summary, "the agent cancelled its own attempt")
	}
	if f, ok := stoppedForTime(res, out.Exit, a.profile); ok {
		failure = f
	}
	failure = withLastOutput(failure, out)
	if out.StderrTail != "" && failure.Diagnostic == "" {
		failure.Diagnostic = tail(out.StderrTail, 4000) // shared/cases B26: stderr's end travels with the failure
	}
	sv.rateLimitFailure(ctx, a, failure)
	_, err := sv.eng.Fail(ctx, a.fence, engine.FailRequest{Failure: failure, Usage: res.Usage, Summary: res.Summary,
		ParallelInRepo: a.parallel.Load(), Lost: !out.Exit.Known})
	return err
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

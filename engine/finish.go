package engine

import (
	"context"
	"errors"
	"fmt"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"math"
	"strings"
	"time"
)

// Complete records a successful attempt (running → completed) with the agent's result: usage
// is added to the mission and its voyage, the landing state becomes pending (or not_required
// for read-only work), write-area conflicts are dropped, and a parent waiting for its
// children resumes when this was its last one. Fenced by the epoch.
//
// The transition is written first, by one guarded statement that returns the row
// (completeGuarded); when its guard matches nothing, completeRead reads the mission first and
// says why (lease lost, not running, not found, a landing already begun) or completes it.
func (e *Engine) Complete(ctx context.Context, f domain.Fence, res domain.WorkerResult) (domain.Mission, error) {
	var m domain.Mission
	if err := checkResult(&res, domain.ResultCompleted); err != nil {
		return m, err
	}
	err := e.update(ctx, "", func(o *op) error {
		var done bool
		var err error
		if m, done, err = o.completeGuarded(f, res); err != nil || done {
			return err
		}
		m, err = o.completeRead(f, res)
		return err
	})
	e.forgetRenewal(f)
	return m, err
}

// completeGuarded is Complete written by Tx.MissionComplete, without reading the row first:
// done false (nothing written) when its guard matched no row, or when the attempt's running
// spend would count and the guard could not tell it is this attempt's.
func (o *op) completeGuarded(f domain.Fence, res domain.WorkerResult) (domain.Mission, bool, error) {
	run, found, err := o.runningUsage(f.MissionID)
	if err != nil {
		return domain.Mission{}, false, err
	}
	p := CompleteParams{Fence: f, Now: o.now, Result: &res}
	if found && noUsage(res.Usage) {
		if run.Attempt <= 0 {
			return domain.Mission{}, false, nil
		}
		u := run.Usage // closeRun's rule, decided before the write: the guard checks the attempt
		res.Usage, p.Attempt = &u, run.Attempt
	}
	m, err := o.tx.MissionComplete(o.ctx, p)
	if errors.Is(err, domain.ErrGuard) {
		return m, false, nil
	}
	if err != nil {
		return m, false, err
	}
	m.Result = &res
	o.track(m)
	if o.actor == "" {
		o.actor = m.Lease.Owner // the lease holder acts: its events carry its id
	}
	if res.Usage, err = o.closeRun(&m, res.Usage, run, found); err != nil {
		return m, false, err
	}
	if err := o.endCompleted(&m, &res); err != nil {
		return m, false, err
	}
	m.Landing = completedLanding(&m)
	// the usage and a landing not required, when they differ from what the statement wrote
	if err := o.save(&m, Guard{State: domain.StateCompleted, Epoch: f.Epoch}); err != nil {
		return m, false, err
	}
	data := map[string]any{"from": domain.StateRunning, "to": domain.StateCompleted, "landing": m.Landing,
		"summary": domain.Clip(res.Summary, 500), "verdict": res.Verdict, "usage": res.Usage}
	if err := o.emit("mission.completed", &m, "", data); err != nil {
		return m, false, err
	}
	return m, true, o.completedAfter(&m)
}

// completeRead is Complete reading the mission first: it tells why a completion cannot be
// written (lease lost, not running, landing begun), and completes what the guarded statement
// could not match to its attempt.
func (o *op) completeRead(f domain.Fence, res domain.WorkerResult) (domain.Mission, error) {
	m, err := o.fenced(f)
	if err != nil {
		return m, err
	}
	if m.State != domain.StateRunning {
		return m, &domain.TransitionError{MissionID: m.ID, Op: "complete", State: m.State}
	}
	if res.Usage, err = o.closeUsage(&m, res.Usage); err != nil {
		return m, err
	}
	if err := o.endCompleted(&m, &res); err != nil {
		return m, err
	}
	m.Result, m.FinishedAt, m.Preempt = &res, o.now, false
	m.Lease.ExpiresAt = time.Time{}
	if err := domain.CheckLanding(m.ID, m.Landing, completedLanding(&m), domain.LandOpComplete); err != nil {
		return m, err
	}
	m.Landing = completedLanding(&m)
	if err := o.move(&m, domain.StateCompleted, "complete", "mission.completed", map[string]any{
		"summary": domain.Clip(res.Summary, 500), "verdict": res.Verdict, "usage": res.Usage, "landing": m.Landing}); err != nil {
		return m, err
	}
	return m, o.completedAfter(&m)
}

// endCompleted records the completed attempt and adds its usage to m and its voyage. The
// running spend is closed already (closeUsage or closeRun): an attempt without usage records
// none, without looking for a running spend again.
func (o *op) endCompleted(m *domain.Mission, res *domain.WorkerResult) error {
	usage := res.Usage
	if usage == nil {
		usage = &domain.Usage{}
	}
	if err := o.endAttempt(m, domain.OutcomeCompleted, nil, usage, res.Summary); err != nil {
		return err
	}
	return o.addUsage(m, res.Usage)
}

// completedLanding is the landing state a mission completing now starts in.
func completedLanding(m *domain.Mission) domain.LandingState {
	if landsNothing(m) != "" { // the reason is told by LandingWhy
		return domain.LandingNotRequired
	}
	return domain.LandingPending
}

// completedAfter is what follows a completion: write-area conflicts dropped, the parent told.
func (o *op) completedAfter(m *domain.Mission) error {
	if err := o.detachWriteArea(m); err != nil {
		return err
	}
	return o.childEnded(m)
}

// checkResult validates a worker result for the given final status.
func checkResult(res *domain.WorkerResult, status string) error {
	if res.Status == "" {
		res.Status = status
	}
	if res.Status != status {
		return domain.Invalid("result.status", fmt.Sprintf("is %q here", res.Status), "complete_mission takes status completed; use fail_mission for a failure")
	}
	switch res.Verdict {
	case "", domain.VerdictApproved, domain.VerdictMinor, domain.VerdictSevere, domain.VerdictInsufficient:
	default:
		return domain.Invalid("result.verdict", fmt.Sprintf("%q is not a verdict", domain.Clip(res.Verdict, 40)), "use approved, minor, severe or insufficient")
	}
	if len(res.Summary) > 64<<10 {
		return domain.Invalid("result.summary", "is too long", "keep it under 64 KiB; put details in the workspace")
	}
	if u := res.Usage; u != nil && (u.InputTokens < 0 || u.OutputTokens < 0 || u.CostUSD < 0) {
		return domain.Invalid("result.usage", "has a negative value", "report tokens and cost as non-negative numbers")
	}
	return nil
}

// addUsage adds u to the mission and to its voyage.
func (o *op) addUsage(m *domain.Mission, u *domain.Usage) error {
	if u == nil || (u.InputTokens == 0 && u.OutputTokens == 0 && u.CostUSD == 0) {
		return nil
	}
	m.Usage.InputTokens += u.InputTokens
	m.Usage.OutputTokens += u.OutputTokens
	m.Usage.CostUSD = roundCost(m.Usage.CostUSD + u.CostUSD)
	if m.VoyageID == "" {
		return nil
	}
	v, err := o.tx.VoyageGet(o.ctx, m.VoyageID)
	if err != nil {
		return err
	}
	v.Usage.InputTokens += u.InputTokens
	v.Usage.OutputTokens += u.OutputTokens
	v.Usage.CostUSD = roundCost(v.Usage.CostUSD + u.CostUSD)
	v.UpdatedAt = o.now
	return o.saveVoyage(&v, v.State, "usage")
}

// FailRequest is a failed attempt's report.
type FailRequest struct {
	Failure domain.Failure
	Usage   *domain.Usage
	Summary string
	// ParallelInRepo says other work ran in the same repository during the attempt (the
	// scheduler knows); a repeated failure then becomes retry_serial.
	ParallelInRepo bool
	// Final fails the mission whatever its budget (a failure retrying cannot fix, such as an
	// agent program that cannot start).
	Final bool
	// Lost says the agent vanished (no result, process gone): like an expired lease, a
	// checkpoint makes the mission interrupted instead of pending.
	Lost bool
}

// Fail records a failed attempt and applies the retry policy (design brief §2): retry after
// backoff, retry_serial, a debugger mission, block with an escalation (environment failures,
// cost limit), or failed when the weighted budget is spent — then hard dependents are blocked
// naming this mission. It returns the mission with its Decision. Fenced by the epoch.
func (e *Engine) Fail(ctx context.Context, f domain.Fence, req FailRequest) (domain.Mission, error) {
	var m domain.Mission
	if req.Failure.Kind == "" {
		req.Failure.Kind = domain.FailureError
	}
	err := e.update(ctx, "", func(o *op) error {
		var err error
		if m, err = o.fenced(f); err != nil {
			return err
		}
		if req.Usage, err = o.closeUsage(&m, req.Usage); err != nil {
			return err
		}
		if err := o.addUsage(&m, req.Usage); err != nil {
			return err
		}
		if req.Lost {
			return o.applyFailure(&m, req, "expire", "agent.lost")
		}
		return o.applyFailure(&m, req, "fail", "mission.failed")
	})
	e.forgetRenewal(f)
	return m, err
}

// applyFailure is the failure path shared by Fail and lease expiry.
func (o *op) applyFailure(m *domain.Mission, req FailRequest, opName, eventType string) error {
	sig := Signature(req.Failure)
	debug := o.e.opt.DebugAvailable != nil && o.e.opt.DebugAvailable()
	tokens, err := o.tx.MissionTokenLimitGet(o.ctx, m.ID)
	if err != nil {
		return err
	}
	out := decideFailure(failureInput{Failure: req.Failure, Signature: sig, PrevSignature: m.LastSignature,
		AttemptsUsed: m.AttemptsUsed, Budget: m.RetryBudget, Spent: CheckSpend(Spend{Mission: m, MissionSpent: m.Usage, MissionTokens: tokens}),
		ParallelInRepo: req.ParallelInRepo, DebugAvailable: debug, Kind: m.Kind})
	if req.Final && out.Decision != domain.DecisionBlock {
		out = failureOutcome{Decision: domain.DecisionFail, To: domain.StateFailed, Weight: max(out.Weight, 1),
			Reason: "a failure retrying cannot fix: " + failureLine(req.Failure, req.Summary)}
	}
	if err := o.endAttempt(m, domain.OutcomeFailed, &req.Failure, req.Usage, req.Summary); err != nil {
		return err
	}
	fail := req.Failure
	m.LastFailure = &fail
	if fail.Kind != domain.FailureRateLimit { // a rate limit between two failures does not part them
		m.LastSignature = sig
	}
	m.AttemptsUsed += out.Weight
	m.Decision = &domain.Decision{Kind: out.Decision, Reason: out.Reason, At: o.now}
	m.Lease.ExpiresAt, m.Preempt, m.FinishedAt = time.Time{}, false, o.now
	data := map[string]any{"decision": out.Decision, "reason": out.Reason, "signature": sig,
		"weight": out.Weight, "failure": req.Failure}
	switch out.Decision {
	case domain.DecisionBlock:
		decision, step := "fix the environment (credentials, toolchain, quota, permission, budget), then resolve this escalation to retry", "resolve_escalation with action retry once fixed"
		if req.Failure.Kind == domain.FailureBudget {
			if decision, step, err = o.budgetDecision(m, tokens); err != nil {
				return err
			}
		}
		return o.blockWith(m, opName, domain.Escalation{Route: out.Route, Kind: blockKind(req.Failure),
			Reason: out.Reason + ": " + failureLine(req.Failure, req.Summary), DecisionRequired: decision,
			Evidence: failureEvidence(req.Failure), SafeNextStep: step}, data)
	case domain.DecisionFail:
		if err := o.move(m, domain.StateFailed, opName, eventType, data); err != nil {
			return err
		}
		if err := o.detachWriteArea(m); err != nil {
			return err
		}
		if err := o.propagateEnd(m); err != nil {
			return err
		}
		return o.childEnded(m)
	}
	m.NotBefore = o.now.Add(o.e.opt.Backoff.Delay(max(m.AttemptsUsed, 1)))
	if fail.Kind == domain.FailureRateLimit {
		m.NotBefore = o.now // its profile's rate-limit window holds it (the planner), not a retry backoff
	}
	m.Serial = out.Decision == domain.DecisionRetrySerial
	data["not_before"] = m.NotBefore
	to := domain.StatePending
	if opName == "expire" && m.Checkpoint != nil {
		to = domain.StateInterrupted // a lost attempt with a checkpoint resumes from it
	}
	if err := o.move(m, to, opName, eventType, data); err != nil {
		return err
	}
	if out.Decision == domain.DecisionDebug {
		return o.spawnDebugger(m, req.Failure)
	}
	return nil
}

func blockKind(f domain.Failure) string {
	if domain.EnvironmentFailure(f.Kind) {
		return "environment"
	}
	return "budget"
}

// failureLineBytes bounds a failure's line in a decision or an escalation's reason: long
// enough that a summary which ends with its advice (a permission failure names the profile
// setting that would allow the refused calls last) reaches the reason whole.
const failureLineBytes = 1000

// failureLine is a failure in one line for a decision or an escalation's reason: its kind,
// then its summary (else the attempt's summary, else its diagnostic).
func failureLine(f domain.Failure, attemptSummary string) string {
	for _, s := range []string{f.Summary, attemptSummary, f.Diagnostic} {
		if strings.TrimSpace(s) != "" {
			return domain.Clip(f.Kind+" "+s, failureLineBytes)
		}
	}
	return f.Kind
}

func failureEvidence(f domain.Failure) []string {
	var ev []string
	for _, kv := range [][2]string{{"kind", f.Kind}, {"tool", f.Tool}, {"diagnostic", f.Diagnostic}, {"location", f.Location}, {"summary", f.Summary}} {
		if kv[1] != "" {
			ev = append(ev, kv[0]+": "+domain.Clip(kv[1], 2000))
		}
	}
	return ev
}

// spawnDebugger creates a debugger mission about m (same repository, voyage and write area)
// and makes m wait for it (a hard edge), so the next attempt runs on top of its findings.
func (o *op) spawnDebugger(m *domain.Mission, f domain.Failure) error {
	budget := 1
	spec := MissionSpec{Title: DerivedTitle("Debug: ", m.Title), Repository: m.Repository,
		TargetBranch: m.TargetBranch, Priority: m.Priority, Persona: "debugger", WriteArea: m.WriteArea,
		Brief: fmt.Sprintf("Mission %s (%s) failed twice the same way. Find the cause and fix it if you can.\n\nFailure:\n%s\n\nOriginal brief:\n%s",
			m.ID, m.Title, joinLines(failureEvidence(f)), m.Brief),
		Kind: domain.KindDebug, SubjectID: m.ID, RetryBudget: &budget}
	if err := spec.normalise("", o.now); err != nil {
		return err
	}
	d, err := o.insertMission(spec, m.VoyageID)
	if err != nil {
		return err
	}
	return o.addEdge(m, domain.Dependency{MissionID: m.ID, DependsOn: d.ID, Type: domain.EdgeHard, Source: domain.SourceScheduler,
		Reason: "a debugger mission investigates the repeated failure first"})
}

func joinLines(lines []string) string {
	out := ""
	for _, l := range lines {
		out += "- " + l + "\n"
	}
	return out
}

// roundCost keeps sums of costs at a nanodollar, so that adding 0.0016 and 0.0008 shows
// 0.0024 rather than floating-point noise.
func roundCost(usd float64) float64 { return math.Round(usd*1e9) / 1e9 }

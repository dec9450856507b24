package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/cenkalti/backoff/v5"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// Backoff is the retry delay policy: Initial doubling up to Max, each delay randomised by
// ±Jitter (design brief §10: 5 s doubling to 5 min, ±20 %).
type Backoff struct {
	Initial time.Duration
	Max     time.Duration
	Jitter  float64
}

func (b Backoff) withDefaults() Backoff {
	if b.Initial == 0 {
		b.Initial = 5 * time.Second
	}
	if b.Max == 0 {
		b.Max = 5 * time.Minute
	}
	if b.Jitter == 0 {
		b.Jitter = 0.2
	}
	return b
}

// Delay returns the wait before retry number n (1 = first retry).
func (b Backoff) Delay(n int) time.Duration {
	eb := backoff.NewExponentialBackOff()
	eb.InitialInterval, eb.MaxInterval, eb.RandomizationFactor, eb.Multiplier = b.Initial, b.Max, b.Jitter, 2
	eb.Reset()
	d := eb.NextBackOff()
	for i := 1; i < n; i++ {
		d = eb.NextBackOff()
	}
	return d
}

var (
	sigNumbers = regexp.MustCompile(`0x[0-9a-f]+|\b[0-9a-f]{7,40}\b|\d+`)
	sigSpace   = regexp.MustCompile(`\s+`)
	sigTemp    = regexp.MustCompile(`/tmp/[^\s:'"]*|/var/folders/[^\s:'"]*`)
)

// Signature normalises a failure into a short stable fingerprint: kind + tool + diagnostic +
// location + summary, lower-cased, with numbers, hex ids, temporary paths and runs of white
// space folded, so that the same fault seen twice gives the same signature even when line
// numbers, pids or temp dirs differ (design brief §2).
func Signature(f domain.Failure) string {
	parts := []string{f.Kind, f.Tool, f.Diagnostic, f.Location, f.Summary}
	for i, p := range parts {
		p = strings.ToLower(p)
		p = sigTemp.ReplaceAllString(p, "<tmp>")
		p = sigNumbers.ReplaceAllString(p, "#")
		p = sigSpace.ReplaceAllString(strings.TrimSpace(p), " ")
		if len(p) > 400 {
			p = p[:400]
		}
		parts[i] = p
	}
	sum := sha256.Sum256([]byte(strings.Join(parts, "\x1f")))
	return hex.EncodeToString(sum[:8])
}

// failureInput is what the failure policy looks at.
type failureInput struct {
	Failure       domain.Failure
	Signature     string
	PrevSignature string
	AttemptsUsed  int // weighted, before this failure
	Budget        int
	// Spent is the mission's own budget (cost or token limit) that its spend, this attempt's
	// included, reached: CheckSpend's answer over the mission alone (nil: none).
	Spent          *Breach
	ParallelInRepo bool // other work ran in the same repository during the attempt
	DebugAvailable bool
	Kind           domain.MissionKind
}

// failureOutcome is the policy's answer: the decision, its reason, the weight this failure
// costs and where the mission goes.
type failureOutcome struct {
	Decision domain.DecisionKind
	Reason   string
	Weight   int
	To       domain.MissionState
	Route    domain.Route // for DecisionBlock
}

// decideFailure applies the retry rules of the design brief §2: environment kinds block with
// an escalation and do not burn the budget; an identical signature to the previous attempt
// counts double; past the budget the mission fails; a repeated identical failure becomes
// retry_serial when other work ran beside it, else a debugger mission when one can run.
func decideFailure(in failureInput) failureOutcome {
	kind := in.Failure.Kind
	if kind == domain.FailureBudget {
		return failureOutcome{Decision: domain.DecisionBlock, To: domain.StateBlocked, Route: domain.RouteMainAgent,
			Reason: "budget failure: a hard budget was crossed and the agent was stopped; retrying would spend more"}
	}
	if domain.EnvironmentFailure(kind) {
		route := domain.RouteMainAgent
		if kind == domain.FailurePermission {
			route = domain.RoutePerson
		}
		return failureOutcome{Decision: domain.DecisionBlock, To: domain.StateBlocked, Route: route,
			Reason: fmt.Sprintf("%s failure: the environment cannot do this, retrying would not help", kind)}
	}
	if kind == domain.FailureRateLimit {
		return failureOutcome{Decision: domain.DecisionRetry, To: domain.StatePending, Weight: 0,
			Reason: fmt.Sprintf("rate-limited: the provider's usage window is exhausted; no retry spent (%d of %d used), the mission waits for its profile's window to reset",
				in.AttemptsUsed, in.Budget)}
	}
	if in.Spent != nil {
		return failureOutcome{Decision: domain.DecisionBlock, To: domain.StateBlocked, Route: domain.RouteMainAgent,
			Reason: in.Spent.Message()}
	}
	weight, repeated := 1, in.PrevSignature != "" && in.Signature == in.PrevSignature
	if repeated {
		weight = 2
	}
	used := in.AttemptsUsed + weight
	if used > in.Budget {
		reason := fmt.Sprintf("retry budget spent: this failure brings the retries used to %d, over the budget of %d", used, in.Budget)
		if repeated {
			reason += " (it repeated the previous failure, so it counted double)"
		}
		return failureOutcome{Decision: domain.DecisionFail, To: domain.StateFailed, Weight: weight, Reason: reason}
	}
	switch {
	case repeated && in.ParallelInRepo:
		return failureOutcome{Decision: domain.DecisionRetrySerial, To: domain.StatePending, Weight: weight,
			Reason: "the same failure twice while other work ran in the repository: retry with nothing in parallel"}
	case repeated && in.DebugAvailable && in.Kind != domain.KindDebug:
		return failureOutcome{Decision: domain.DecisionDebug, To: domain.StatePending, Weight: weight,
			Reason: "the same failure twice: a debugger mission investigates before the next attempt"}
	case repeated:
		return failureOutcome{Decision: domain.DecisionRetry, To: domain.StatePending, Weight: weight,
			Reason: "the same failure twice (counts double): retry after backoff"}
	}
	return failureOutcome{Decision: domain.DecisionRetry, To: domain.StatePending, Weight: weight,
		Reason: fmt.Sprintf("%s failure: retry after backoff (%d of %d retries used)", orDefault(kind, "unclassified"), used, in.Budget)}
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

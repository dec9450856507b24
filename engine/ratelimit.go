package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
)

// WhyRateLimited is the planner's hold of a mission whose every eligible profile waits for
// its provider's usage window to reset ("profile P rate-limited until T"). It goes away by
// itself at the reset: the scheduler's tick wakes then.
const WhyRateLimited = "rate_limited"

// Rate-window statuses as stored (RateWindow.Status): the agent protocol's.
const (
	RatePaused  = agent.RateRejected // no new attempt of the group starts until Until
	RateWarning = agent.RateWarning  // the group's profiles run at half their concurrency until Until
)

// RateWindow is one limit group's usage window as the scheduler last learned it from its
// agents (task.rate_limit, or a rate_limit failure): a pause (Status RatePaused) or a
// warning (RateWarning) that lasts until Until. A group is a profile's limit_group, or the
// profile's own name when it has none; several profiles that share one provider account share
// one group. Absent: the window has room.
type RateWindow struct {
	Group     string    `json:"group"`
	Status    string    `json:"status"`
	Until     time.Time `json:"until"`                // the pause or warning ends (reset + margin, or the backoff step's end)
	ResetsAt  time.Time `json:"resets_at,omitzero"`   // the reset the agent reported (zero: unknown)
	LimitType string    `json:"limit_type,omitempty"` // five_hour, seven_day, requests …
	// Steps counts the backoff steps taken in a row while the reset time was unknown (0 when
	// it was known); the pause of step n is the retry backoff's delay n.
	Steps     int       `json:"steps,omitempty"`
	Profile   string    `json:"profile"`              // the profile whose agent reported it
	MissionID string    `json:"mission_id,omitempty"` // the mission whose attempt reported it
	Why       string    `json:"why"`                  // how Until was decided, one line
	Since     time.Time `json:"since"`                // when this status began
	UpdatedAt time.Time `json:"updated_at"`
}

// Active reports whether the window still holds at now.
func (w RateWindow) Active(now time.Time) bool { return w.Until.After(now) }

// RatePolicy is how the scheduler turns a reported window into a pause: Margin is added to a
// known reset (the provider's clock and ours differ; default 30 s), and an unknown reset
// backs off exponentially from BackoffInitial (default 15 s) doubling up to BackoffMax
// (default 5 min) with ±20 % jitter. WarningFor is how long a warning without a reset lowers
// concurrency (default 5 min).
type RatePolicy struct {
	Margin         time.Duration
	BackoffInitial time.Duration
	BackoffMax     time.Duration
	WarningFor     time.Duration
}

func (p RatePolicy) withDefaults() RatePolicy {
	if p.Margin == 0 {
		p.Margin = 30 * time.Second
	}
	if p.BackoffInitial == 0 {
		p.BackoffInitial = 15 * time.Second
	}
	if p.BackoffMax == 0 {
		p.BackoffMax = 5 * time.Minute
	}
	if p.WarningFor == 0 {
		p.WarningFor = 5 * time.Minute
	}
	return p
}

// RateSignal is one report of a group's window: what an agent of Profile, running MissionID,
// said (Limit).
type RateSignal struct {
	Group     string
	Profile   string
	MissionID string
	Limit     agent.RateLimit
	// CompletedStarted, when set, says the signal is an allowed inferred from an attempt that
	// completed (Claude Code with an API key never reports allowed), which began then: it
	// lifts a pause only when that attempt began after the pause did, or when the pause's
	// end was a guess (a backoff step). An attempt that was already running when the
	// provider rejected the window says nothing about the window now.
	CompletedStarted time.Time
}

// NextRateWindow decides what a signal makes of a group's window (prev: the stored one, nil
// when none), at now; keep is false when the group has room again (the window is removed).
//
//   - allowed lifts a pause or a warning; inferred from a completed attempt
//     (CompletedStarted), it lifts a pause whose end the provider gave (a reset, a
//     retry-after) only when that attempt began after the pause did.
//   - allowed_warning: a warning until the reported reset (else WarningFor from now).
//   - rejected with a reset in the future: paused until the reset plus Margin; with a
//     retry-after hint: until now + hint + Margin; with neither: the next backoff step (the
//     step after the last one once its pause is over; while a pause is still on, the same
//     pause: several agents hitting one window take one step, not one each).
//   - A rejection never shortens a pause that is still on.
func NextRateWindow(prev *RateWindow, sig RateSignal, pol RatePolicy, now time.Time) (w RateWindow, keep bool) {
	pol = pol.withDefaults()
	l := sig.Limit
	w = RateWindow{Group: sig.Group, Status: l.Status, ResetsAt: l.ResetsAt, LimitType: l.LimitType, Profile: sig.Profile,
		MissionID: sig.MissionID, Since: now, UpdatedAt: now}
	if prev != nil && prev.Status == l.Status {
		w.Since = prev.Since
	}
	who := fmt.Sprintf("reported by mission %s on profile %s", orDefault(sig.MissionID, "?"), orDefault(sig.Profile, "?"))
	switch l.Status {
	case agent.RateWarning:
		w.Until = now.Add(pol.WarningFor)
		w.Why = fmt.Sprintf("the window is nearly used up, %s, reset time unknown: half concurrency for %s", who, pol.WarningFor)
		if l.ResetsAt.After(now) {
			w.Until = l.ResetsAt
			w.Why = fmt.Sprintf("the window is nearly used up, %s: half concurrency until it resets", who)
		}
		return w, true
	case agent.RateRejected:
	default:
		if staleRoom(prev, sig, now) {
			return *prev, true
		}
		return w, false // allowed (or a status the adapter should not have passed on)
	}
	active := prev != nil && prev.Status == RatePaused && prev.Active(now)
	switch {
	case l.ResetsAt.After(now):
		w.Until = l.ResetsAt.Add(pol.Margin)
		w.Why = fmt.Sprintf("the window resets at %s, %s, plus rate_limit_margin %s", stamp(l.ResetsAt), who, pol.Margin)
	case l.RetryAfterSeconds > 0:
		d := time.Duration(l.RetryAfterSeconds * float64(time.Second))
		w.Until = now.Add(d + pol.Margin)
		w.Why = fmt.Sprintf("the provider said retry after %s, %s, plus rate_limit_margin %s", d.Round(time.Millisecond), who, pol.Margin)
	case active:
		return *prev, true // the pause on now already answers this rejection
	default:
		w.Steps = 1
		if prev != nil && prev.Status == RatePaused && prev.Steps > 0 {
			w.Steps = prev.Steps + 1
		}
		d := min(Backoff{Initial: pol.BackoffInitial, Max: pol.BackoffMax, Jitter: 0.2}.Delay(w.Steps), pol.BackoffMax) // jitter never passes the cap
		w.Until = now.Add(d)
		w.Why = fmt.Sprintf("reset time unknown, %s: backoff step %d, %s (exponential from %s, at most %s, ±20%% jitter)",
			who, w.Steps, d.Round(time.Second), pol.BackoffInitial, pol.BackoffMax)
	}
	if active && prev.Until.After(w.Until) {
		return *prev, true
	}
	return w, true
}

// staleRoom: sig is the room inferred from an attempt that completed, but it was already
// running when the provider paused the group until a time it gave; the pause stands.
func staleRoom(prev *RateWindow, sig RateSignal, now time.Time) bool {
	return !sig.CompletedStarted.IsZero() && prev != nil && prev.Status == RatePaused && prev.Active(now) &&
		prev.Steps == 0 && !sig.CompletedStarted.After(prev.Since)
}

// RateLimitedReason is the hold of a mission that waits for a paused group, one sentence:
// "profile P rate-limited until T, resumes by itself: <how T was decided>" (T in RFC 3339,
// UTC; the how is w.Why). It is the one place this text is made.
func RateLimitedReason(profile string, w RateWindow) Reason {
	return Reason{Code: WhyRateLimited, Until: w.Until,
		Message: fmt.Sprintf("profile %s rate-limited until %s, resumes by itself: %s", profile, stamp(w.Until), w.Why)}
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// RecordRateLimit applies a group's rate-limit signal (NextRateWindow) in one write
// transaction, with an event when the window's status or end changed (profile.rate_limited,
// profile.rate_warning, profile.rate_cleared: what notifications and logs read). It returns
// the window as it now stands (zero Status: the group has room) and whether it changed.
func (e *Engine) RecordRateLimit(ctx context.Context, sig RateSignal, pol RatePolicy) (RateWindow, bool, error) {
	var out RateWindow
	var changed bool
	err := e.update(ctx, "scheduler", func(o *op) error {
		out, changed = RateWindow{}, false
		ws, err := o.tx.RateWindowList(o.ctx)
		if err != nil {
			return err
		}
		var prev *RateWindow
		for i := range ws {
			if ws[i].Group == sig.Group {
				prev = &ws[i]
			}
		}
		w, keep := NextRateWindow(prev, sig, pol, o.now)
		switch {
		case !keep && prev == nil:
			return nil
		case !keep:
			changed = true
			if err := o.tx.RateWindowDelete(o.ctx, sig.Group); err != nil {
				return err
			}
			return o.emit("profile.rate_cleared", nil, "", map[string]any{"group": sig.Group, "profile": sig.Profile, "was": prev.Status})
		}
		out = w
		if prev != nil && prev.Status == w.Status && prev.Until.Equal(w.Until) {
			return nil
		}
		changed = true
		if err := o.tx.RateWindowPut(o.ctx, &w); err != nil {
			return err
		}
		typ := "profile.rate_limited"
		if w.Status == RateWarning {
			typ = "profile.rate_warning"
		}
		return o.emit(typ, nil, "", w)
	})
	return out, changed, err
}

// RateWindows returns the stored windows (paused or warned groups), by group; a window whose
// Until has passed is still returned until a signal lifts it (callers check Active).
func (e *Engine) RateWindows(ctx context.Context) (map[string]RateWindow, error) {
	return viewValue(ctx, e, func(r Reader) (map[string]RateWindow, error) {
		ws, err := r.RateWindowList(ctx)
		out := make(map[string]RateWindow, len(ws))
		for _, w := range ws {
			out[w.Group] = w
		}
		return out, err
	})
}

package runner

import "time"

// stallAction is what the stall watch decides at a check.
type stallAction int

const (
	stallNone stallAction = iota
	stallPing             // the silence reached the threshold: ping and record, once per silence
	stallStop             // the silence reached the timeout: stop the agent
)

// stallWatch decides, from how long the agent has been silent, when to ping it and when to
// stop it. threshold 0 turns pinging off, timeout 0 turns stopping off (runner.Launch applies
// the profile's defaults first, so both are normally set).
type stallWatch struct {
	threshold, timeout time.Duration
	pinged             time.Time // the last output before the silence already pinged
}

func newStallWatch(threshold, timeout time.Duration) *stallWatch {
	return &stallWatch{threshold: threshold, timeout: timeout}
}

// check decides at a moment when the last output was at last and idle has passed since.
func (w *stallWatch) check(last time.Time, idle time.Duration) stallAction {
	switch {
	case w.timeout > 0 && idle >= w.timeout:
		return stallStop
	case w.threshold > 0 && idle >= w.threshold && !last.Equal(w.pinged):
		w.pinged = last
		return stallPing
	}
	return stallNone
}

// next returns when to check again, given the silence so far (nil: never): at the threshold
// of this silence, or — already past it (pinged) — one threshold from now, the earliest a new
// silence could reach it; and at the timeout.
func (w *stallWatch) next(idle time.Duration) <-chan time.Time {
	var wait time.Duration
	consider := func(d time.Duration) {
		if d > 0 && (wait == 0 || d < wait) {
			wait = d
		}
	}
	if w.threshold > 0 {
		if idle < w.threshold {
			consider(w.threshold - idle)
		} else {
			consider(w.threshold)
		}
	}
	if w.timeout > 0 && idle < w.timeout {
		consider(w.timeout - idle)
	}
	if wait == 0 {
		return nil
	}
	return time.After(wait)
}

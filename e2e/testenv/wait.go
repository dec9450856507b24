package testenv

import (
	"fmt"
	"testing"
	"time"
)

// Waiting in tests (issue 28): a test waits for the condition it needs, never for a fixed
// time, and a wait ends only at the test binary's own deadline (go test -timeout) less a
// margin, so that a loaded machine makes a test slower, never red. Raising a bound is not a
// fix: there is no bound to raise.

const (
	// waitMargin is the time a wait leaves before the test binary's deadline for the failure
	// report and the test's cleanup (killing children, removing directories).
	waitMargin = 30 * time.Second
	// noDeadlineWait bounds a wait when the binary has no deadline (go test -timeout 0), as
	// go test's default -timeout would.
	noDeadlineWait = 10 * time.Minute
	// firstPoll and lastPoll bound the pause between two looks at a condition: it starts
	// short (most conditions hold at once or soon) and doubles up to lastPoll (a condition
	// that takes seconds under load is not polled hundreds of times a second).
	firstPoll = 10 * time.Millisecond
	lastPoll  = 100 * time.Millisecond
)

// WaitDeadline returns when a wait in t gives up: t's deadline (the test binary's -timeout)
// less a margin of 30 s (a quarter of the time left when less than 2 minutes are left), or 10
// minutes from now when t has none (a testing.B, or go test -timeout 0).
func WaitDeadline(t testing.TB) time.Time {
	if dt, ok := t.(interface{ Deadline() (time.Time, bool) }); ok {
		if d, ok := dt.Deadline(); ok {
			return d.Add(-min(waitMargin, time.Until(d)/4))
		}
	}
	return time.Now().Add(noDeadlineWait)
}

// WaitFor polls cond until it holds, and fails t with "timed out waiting for <what>" at
// WaitDeadline(t). cond runs on the caller's goroutine and may itself fail t.
func WaitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	waitUntil(t, what, WaitDeadline(t), cond, nil)
}

// WaitForState is WaitFor whose failure message also says where things stand: state runs
// once, at the failure ("timed out waiting for <what>; last: <state>"), and may read what
// cond saw last.
func WaitForState(t testing.TB, what string, cond func() bool, state func() string) {
	t.Helper()
	waitUntil(t, what, WaitDeadline(t), cond, state)
}

// WaitForValue polls get until it reports ok, and returns its value; it fails t as WaitFor
// does.
func WaitForValue[V any](t testing.TB, what string, get func() (V, bool)) V {
	t.Helper()
	var v V
	waitUntil(t, what, WaitDeadline(t), func() bool {
		var ok bool
		v, ok = get()
		return ok
	}, nil)
	return v
}

// Receive waits for a value on ch, or for ch to close, and returns what the receive returned
// (ok is false when ch closed); it fails t with "timed out waiting for <what>" at
// WaitDeadline(t).
func Receive[V any](t testing.TB, what string, ch <-chan V) (V, bool) {
	t.Helper()
	return receiveBy(t, what, WaitDeadline(t), ch, nil)
}

// ReceiveState is Receive whose failure message also gives state() ("timed out waiting for
// <what>; last: <state>"), e.g. a child process's stderr.
func ReceiveState[V any](t testing.TB, what string, ch <-chan V, state func() string) (V, bool) {
	t.Helper()
	return receiveBy(t, what, WaitDeadline(t), ch, state)
}

// waitUntil is WaitFor's loop with the deadline given: the tests of this package give a near
// one and a fake t to see the failure without waiting minutes. It returns after failing t (a
// fake t's Fatal returns).
func waitUntil(t testing.TB, what string, deadline time.Time, cond func() bool, state func() string) {
	t.Helper()
	start := time.Now()
	for pause := firstPoll; !cond(); pause = min(2*pause, lastPoll) {
		left := time.Until(deadline)
		if left <= 0 {
			t.Fatal(timedOut(start, what, state))
			return
		}
		time.Sleep(min(pause, left))
	}
}

// timedOut is the failure message of a wait that began at start.
func timedOut(start time.Time, what string, state func() string) string {
	msg := fmt.Sprintf("timed out after %v waiting for %s", time.Since(start).Round(time.Millisecond), what)
	if state != nil {
		msg += "; last: " + state()
	}
	return msg
}

func receiveBy[V any](t testing.TB, what string, deadline time.Time, ch <-chan V, state func() string) (V, bool) {
	t.Helper()
	start := time.Now()
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	select {
	case v, ok := <-ch:
		return v, ok
	case <-timer.C:
		t.Fatal(timedOut(start, what, state))
		var zero V
		return zero, false
	}
}

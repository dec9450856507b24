package main

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// fataler is the part of testing.TB waitWhileProgressing uses (a recorder in its own test).
type fataler interface {
	Helper()
	Fatalf(format string, args ...any)
}

// waitWhileProgressing waits for a long run of work to finish: check reports how many items
// are finished and whether all are. It fails only when that count has not risen for stall, so
// a machine loaded by other work (each landing slower, the resource guard running fewer agents
// at once) slows the run without failing it, while a run that stops advancing still fails, and
// says where it stopped. A count that falls (work undone) does not count as progress.
func waitWhileProgressing(t fataler, what string, stall time.Duration, check func() (finished int, done bool)) {
	t.Helper()
	waitProgressingOn(t, realClock{}, what, stall, check)
}

// progressClock is the time waitWhileProgressing reads and sleeps on (a fake one in its test).
type progressClock interface {
	Now() time.Time
	Sleep(time.Duration)
}

type realClock struct{}

func (realClock) Now() time.Time        { return time.Now() }
func (realClock) Sleep(d time.Duration) { time.Sleep(d) }

func waitProgressingOn(t fataler, clock progressClock, what string, stall time.Duration, check func() (int, bool)) {
	t.Helper()
	best, since := -1, clock.Now()
	for {
		n, done := check()
		if done {
			return
		}
		if n > best {
			best, since = n, clock.Now()
		}
		if clock.Now().Sub(since) > stall {
			t.Fatalf("timed out waiting for %s: %d finished, none more for %s", what, best, stall)
			return
		}
		clock.Sleep(50 * time.Millisecond)
	}
}

// fakeClock advances only when slept on.
type fakeClock struct{ now time.Time }

func (c *fakeClock) Now() time.Time        { return c.now }
func (c *fakeClock) Sleep(d time.Duration) { c.now = c.now.Add(d) }

// fatalRecorder records Fatalf instead of ending the test.
type fatalRecorder struct{ msg string }

func (*fatalRecorder) Helper() {}
func (r *fatalRecorder) Fatalf(format string, args ...any) {
	r.msg = fmt.Sprintf(format, args...)
}

// A run that keeps finishing items is waited for far past the stall window; one whose count
// stops rising (or only falls) fails once the window passes, naming how far it got.
func TestWaitWhileProgressing_FailsOnlyWhenProgressStops(t *testing.T) {
	const stall = time.Second
	clock := &fakeClock{now: time.Unix(0, 0)}
	start := clock.now
	var r fatalRecorder
	calls := 0
	waitProgressingOn(&r, clock, "a slow run", stall, func() (int, bool) {
		calls++
		return calls / 10, clock.now.Sub(start) > 10*stall // one more every 10 readings (500 ms)
	})
	if r.msg != "" {
		t.Fatalf("a run that kept progressing failed: %s", r.msg)
	}
	if clock.now.Sub(start) <= 10*stall {
		t.Fatalf("returned after %s, before the run was done", clock.now.Sub(start))
	}

	r, calls = fatalRecorder{}, 0
	waitProgressingOn(&r, clock, "a stuck run", stall, func() (int, bool) {
		calls++
		return max(0, 3-calls), false // 2, 1, 0, 0, …: only falls after the first reading
	})
	if !strings.Contains(r.msg, "a stuck run: 2 finished, none more for 1s") {
		t.Fatalf("a stuck run did not fail as expected: %q", r.msg)
	}
}

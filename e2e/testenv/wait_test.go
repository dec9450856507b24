package testenv

import (
	"fmt"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// fakeT records a failure instead of ending the goroutine, so that the failure path of a wait
// can be checked; deadline is what Deadline reports.
type fakeT struct {
	testing.TB
	failures []string
	deadline time.Time
}

func (f *fakeT) Helper() {}

func (f *fakeT) Fatal(args ...any) { f.failures = append(f.failures, fmt.Sprint(args...)) }

func (f *fakeT) Deadline() (time.Time, bool) { return f.deadline, !f.deadline.IsZero() }

func TestWaitFor_ReturnsAtOnceWhenTheConditionHolds(t *testing.T) {
	f := &fakeT{}
	calls := 0
	// A deadline already past: a condition that holds is seen before the deadline matters.
	waitUntil(f, "something true", time.Now().Add(-time.Second), func() bool { calls++; return true }, nil)
	if len(f.failures) != 0 || calls != 1 {
		t.Fatalf("failures %q after %d calls; want none after 1", f.failures, calls)
	}
}

func TestWaitFor_PollsUntilTheConditionHolds(t *testing.T) {
	var calls atomic.Int32
	WaitFor(t, "the fifth look", func() bool { return calls.Add(1) >= 5 })
	if got := calls.Load(); got != 5 {
		t.Fatalf("cond ran %d times; want 5 (it stops looking once the condition holds)", got)
	}
}

func TestWaitFor_FailsAtTheDeadlineNamingWhatItWaitedFor(t *testing.T) {
	f := &fakeT{}
	calls := 0
	waitUntil(f, "the moon to turn blue", time.Now().Add(150*time.Millisecond), func() bool {
		calls++
		return false
	}, nil)
	if len(f.failures) != 1 || !strings.Contains(f.failures[0], "timed out after ") ||
		!strings.HasSuffix(f.failures[0], "waiting for the moon to turn blue") {
		t.Fatalf("failures %q; want one \"timed out after … waiting for the moon to turn blue\"", f.failures)
	}
	if calls < 2 {
		t.Fatalf("cond ran %d times before the deadline; want it polled (at least twice)", calls)
	}
}

func TestWaitForState_FailureGivesTheLastState(t *testing.T) {
	f := &fakeT{}
	n := 0
	states := 0
	waitUntil(f, "three workers", time.Now().Add(50*time.Millisecond), func() bool {
		n++
		return false
	}, func() string { states++; return fmt.Sprintf("%d workers", n) })
	want := fmt.Sprintf("waiting for three workers; last: %d workers", n)
	if len(f.failures) != 1 || !strings.HasSuffix(f.failures[0], want) || states != 1 {
		t.Fatalf("failures %q, state asked %d times; want one ending %q, state asked once", f.failures, states, want)
	}
}

func TestWaitForValue_ReturnsTheValueThatSatisfied(t *testing.T) {
	n := 0
	got := WaitForValue(t, "a third value", func() (int, bool) { n++; return n * 10, n == 3 })
	if got != 30 {
		t.Fatalf("WaitForValue returned %d; want 30", got)
	}
}

func TestWaitDeadline_IsTheTestDeadlineLessAMargin(t *testing.T) {
	d := time.Now().Add(20 * time.Minute)
	if got := WaitDeadline(&fakeT{deadline: d}); !got.Equal(d.Add(-waitMargin)) {
		t.Fatalf("WaitDeadline = %v; want the test's deadline %v less %v", got, d, waitMargin)
	}
	// A short -timeout keeps most of its time for the wait instead of ending it at once.
	near := time.Now().Add(40 * time.Second)
	if got := WaitDeadline(&fakeT{deadline: near}); !got.After(time.Now().Add(20*time.Second)) || !got.Before(near) {
		t.Fatalf("WaitDeadline = %v for a deadline 40 s away; want between 20 s from now and %v", got, near)
	}
	before := time.Now()
	if got := WaitDeadline(&fakeT{}); got.Before(before.Add(noDeadlineWait)) {
		t.Fatalf("WaitDeadline without a test deadline = %v; want %v from now", got, noDeadlineWait)
	}
}

func TestReceive_ReturnsTheValueOrTheClose(t *testing.T) {
	ch := make(chan string, 1)
	ch <- "hello"
	if v, ok := Receive(t, "a greeting", ch); v != "hello" || !ok {
		t.Fatalf("Receive = %q, %v; want hello, true", v, ok)
	}
	close(ch)
	if v, ok := Receive(t, "the close", ch); v != "" || ok {
		t.Fatalf("Receive on a closed channel = %q, %v; want \"\", false", v, ok)
	}
}

func TestReceive_FailsAtTheDeadline(t *testing.T) {
	f := &fakeT{}
	_, ok := receiveBy(f, "a letter", time.Now().Add(50*time.Millisecond), make(chan int), nil)
	if ok || len(f.failures) != 1 || !strings.HasSuffix(f.failures[0], "waiting for a letter") {
		t.Fatalf("ok %v, failures %q; want false and one \"… waiting for a letter\"", ok, f.failures)
	}
	f = &fakeT{}
	receiveBy(f, "a letter", time.Now().Add(50*time.Millisecond), make(chan int), func() string { return "no post today" })
	if len(f.failures) != 1 || !strings.HasSuffix(f.failures[0], "waiting for a letter; last: no post today") {
		t.Fatalf("failures %q; want one ending \"waiting for a letter; last: no post today\"", f.failures)
	}
}

func TestGoroutinesIn_SeesAGoroutineBlockedInAFunction(t *testing.T) {
	release := make(chan struct{})
	done := make(chan struct{})
	go func() { blockedForTest(release); close(done) }()
	WaitFor(t, "the goroutine blocked in blockedForTest", func() bool {
		return GoroutinesIn("testenv.blockedForTest(", "chan receive") == 1
	})
	if n := GoroutinesIn("testenv.blockedForTest(", "no such function("); n != 0 {
		t.Fatalf("GoroutinesIn counted %d goroutines through a function none runs", n)
	}
	close(release)
	Receive(t, "the goroutine to end", done)
	WaitFor(t, "no goroutine in blockedForTest", func() bool { return GoroutinesIn("testenv.blockedForTest(") == 0 })
}

//go:noinline
func blockedForTest(release <-chan struct{}) { <-release }

func TestProcessesIn_ListsAChildWorkingInTheDirectory(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command("sleep", "600")
	cmd.Dir = dir
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-exited })
	want := strconv.Itoa(cmd.Process.Pid) + " sleep 600 (in " + dir + ")"
	WaitFor(t, "the child's process entry", func() bool { return slices.Contains(ProcessesIn(dir), want) })
	if other := ProcessesIn(t.TempDir()); len(other) != 0 {
		t.Fatalf("processes in an unused directory: %v", other)
	}
	_ = cmd.Process.Kill()
	Receive(t, "the child to exit", exited)
	if left := ProcessesIn(dir); len(left) != 0 {
		t.Fatalf("processes left after the child exited: %v", left)
	}
}

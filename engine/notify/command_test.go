package notify_test

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/engine/notify"
)

// appendScript writes a real program that appends its second argument, a tab and its stdin
// as one line to the file named by its first argument.
func appendScript(t *testing.T) (script, out string) {
	t.Helper()
	dir := t.TempDir()
	script, out = filepath.Join(dir, "notify.sh"), filepath.Join(dir, "received.txt")
	require.NoError(t, os.WriteFile(script, []byte("#!/bin/sh\n{ printf '%s\\t' \"$2\"; cat; printf '\\n'; } >> \"$1\"\n"), 0o755))
	return script, out
}

// received reads the lines the script appended: the expanded argument and the message.
func received(t *testing.T, out string) (args []string, msgs []notify.Message) {
	t.Helper()
	f, err := os.Open(out)
	if os.IsNotExist(err) {
		return nil, nil
	}
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		arg, body, ok := strings.Cut(sc.Text(), "\t")
		require.True(t, ok, "%q", sc.Text())
		args = append(args, arg)
		msgs = append(msgs, decode(t, []byte(body)))
	}
	require.NoError(t, sc.Err())
	return args, msgs
}

// Every kind of notification, made by the engine's own operations, reaches a real command
// with the message on stdin and the placeholders of its argv expanded; events that are no
// notification (a mission created, an ordinary hold, a retry) send nothing.
func TestCommand_ReceivesEachEventType(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	script, out := appendScript(t)
	n := w.notifier(fastRetry, notify.Sink{Name: "cmd", Command: []string{script, out, "{type} {mission_id}"}, Timeout: time.Minute})
	ctx := w.ctx

	// a voyage whose one mission fails for good, then settles blocked
	d, err := w.e.Dispatch(ctx, engine.VoyageSpec{Title: "v", Missions: []engine.MissionSpec{{Key: "only", Title: "only", RetryBudget: ptr(0)}}}, "test")
	require.NoError(t, err)
	failed := d.Missions[0]
	a, err := w.e.Acquire(ctx, engine.AcquireRequest{AgentID: "agent", MissionID: failed.ID, Start: true})
	require.NoError(t, err)
	_, err = w.e.Fail(ctx, a.Fence(), engine.FailRequest{Failure: domain.Failure{Kind: "test", Summary: "the tests fail"}})
	require.NoError(t, err)
	_, err = w.e.SettleVoyage(ctx, d.Voyage.ID, nil)
	require.NoError(t, err)
	// a retried failure is no notification
	retried := w.mission(engine.MissionSpec{RetryBudget: ptr(3), WriteArea: []string{"r/**"}})
	a, err = w.e.Acquire(ctx, engine.AcquireRequest{AgentID: "agent", MissionID: retried.ID, Start: true})
	require.NoError(t, err)
	_, err = w.e.Fail(ctx, a.Fence(), engine.FailRequest{Failure: domain.Failure{Kind: "test", Summary: "flaky"}})
	require.NoError(t, err)
	// a landing that waits for approval
	done := w.mission(engine.MissionSpec{WriteArea: []string{"d/**"}})
	a, err = w.e.Acquire(ctx, engine.AcquireRequest{AgentID: "agent", MissionID: done.ID, Start: true})
	require.NoError(t, err)
	_, err = w.e.Complete(ctx, a.Fence(), domain.WorkerResult{Summary: "done"})
	require.NoError(t, err)
	_, err = w.e.AwaitApproval(ctx, done.ID, "the repository's landing policy is approval")
	require.NoError(t, err)
	// holds: budget, rate limit, and an ordinary one
	budget, limited, queued := w.mission(engine.MissionSpec{WriteArea: []string{"b/**"}}),
		w.mission(engine.MissionSpec{WriteArea: []string{"l/**"}}), w.mission(engine.MissionSpec{WriteArea: []string{"q/**"}})
	_, err = w.e.RecordHolds(ctx, []engine.Hold{
		{MissionID: budget.ID, Reason: engine.Reason{Code: engine.WhyBudget, Message: engine.Breach{Scope: engine.ScopeVoyage, Subject: "v-1", Measure: engine.MeasureCost, Spent: 0.06, Limit: 0.05}.HoldMessage()}},
		{MissionID: limited.ID, Reason: engine.Reason{Code: "rate_limited", Message: "profile claude rate-limited until 10:00", Until: t0.Add(time.Hour)}},
		{MissionID: queued.ID, Reason: engine.Reason{Code: engine.WhySlots, Message: "2 running"}},
	})
	require.NoError(t, err)
	esc := w.escalate(queued.ID, "pick a library")

	w.step(n)
	args, msgs := received(t, out)
	byType, count := map[string]notify.Message{}, map[string]int{}
	for i, m := range msgs {
		require.Equal(t, m.Type+" "+m.MissionID, args[i], "placeholders expanded in argv")
		byType[m.Type] = m
		count[m.Type]++
	}
	want := map[string]int{}
	for _, typ := range notify.Types {
		want[typ] = 1
	}
	want[notify.TypeEscalationOpened] = 2 // the blocked voyage's report and the question
	require.Equal(t, want, count, "one message per notification, nothing else: %v", args)
	require.Equal(t, failed.ID, byType[notify.TypeMissionFailed].MissionID)
	require.Equal(t, d.Voyage.ID, byType[notify.TypeMissionFailed].VoyageID)
	require.Equal(t, d.Voyage.ID, byType[notify.TypeVoyageSettled].VoyageID)
	require.Contains(t, byType[notify.TypeVoyageSettled].Summary, "blocked")
	require.Equal(t, done.ID, byType[notify.TypeLandingApproval].MissionID)
	require.Equal(t, budget.ID, byType[notify.TypeBudgetHold].MissionID)
	require.Contains(t, byType[notify.TypeBudgetHold].Summary, "$0.0600 of $0.0500")
	require.Equal(t, limited.ID, byType[notify.TypeRateLimitHold].MissionID)
	require.Contains(t, byType[notify.TypeRateLimitHold].Summary, "rate-limited until 10:00")
	require.Equal(t, esc.ID, byType[notify.TypeEscalationOpened].EscalationID)
	require.Equal(t, engine.NoticeCounts{}, w.counts())

	w.step(n)
	_, again := received(t, out)
	require.Len(t, again, len(msgs), "each event is sent once")
}

// A command that fails (non-zero exit) is retried; one that outlives its timeout is killed
// with its process group and retried too, the error saying so.
func TestCommand_FailureAndTimeoutRetried(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	dir := t.TempDir()
	flag := filepath.Join(dir, "fail")
	require.NoError(t, os.WriteFile(flag, nil, 0o600))
	script := filepath.Join(dir, "flaky.sh")
	require.NoError(t, os.WriteFile(script, []byte("#!/bin/sh\ncat > /dev/null\nif [ -e \"$1\" ]; then echo 'the display is not ready' >&2; exit 3; fi\n"), 0o755))
	slow := filepath.Join(dir, "slow.sh")
	require.NoError(t, os.WriteFile(slow, []byte("#!/bin/sh\nsleep 600\n"), 0o755))
	n := w.notifier(fastRetry, notify.Sink{Name: "flaky", Command: []string{script, flag}, Timeout: time.Minute},
		notify.Sink{Name: "slow", Command: []string{slow}, Timeout: 300 * time.Millisecond})
	w.escalate(w.mission(engine.MissionSpec{}).ID, "stuck")
	w.step(n)
	require.Equal(t, engine.NoticeCounts{Pending: 2, Failing: 2}, w.counts())
	require.Contains(t, w.logs.String(), "exited with exit status 3: the display is not ready")
	require.Contains(t, w.logs.String(), "stopped after its timeout 300ms")
	require.NoError(t, os.Remove(flag))
	w.clock.Advance(5 * time.Second)
	w.step(n)
	require.Equal(t, engine.NoticeCounts{Pending: 1, Failing: 1}, w.counts(), "the flaky command succeeded, the slow one is retried")
}

func ptr[T any](v T) *T { return &v }

// Shell syntax in a message stays literal in the command's argv (shared/cases B33): no shell
// runs between the scheduler and the command.
func TestCommand_ShellSyntaxStaysLiteral(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	script, out := appendScript(t)
	pwned := filepath.Join(t.TempDir(), "pwned")
	n := w.notifier(fastRetry, notify.Sink{Name: "cmd", Command: []string{script, out, "{summary}"}, Timeout: time.Minute})
	reason := "$(touch " + pwned + ") `touch " + pwned + "`; touch " + pwned
	w.escalate(w.mission(engine.MissionSpec{}).ID, reason)
	w.step(n)
	args, msgs := received(t, out)
	require.Len(t, msgs, 1)
	require.Contains(t, args[0], reason, "the summary reached argv as it is")
	require.NoFileExists(t, pwned)
}

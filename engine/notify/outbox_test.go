package notify_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/engine/notify"
)

// Filters: a sink with events = [...] gets only those types, one with voyages = [...] only
// messages about those voyages; a sink without filters gets everything.
func TestFilters_ByTypeAndVoyage(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	all, failures, ours := newReceiver(t), newReceiver(t), newReceiver(t)
	d, err := w.e.Dispatch(w.ctx, engine.VoyageSpec{Title: "ours", Missions: []engine.MissionSpec{{Key: "a", Title: "a"}}}, "test")
	require.NoError(t, err)
	other, err := w.e.Dispatch(w.ctx, engine.VoyageSpec{Title: "other", Missions: []engine.MissionSpec{{Key: "b", Title: "b", RetryBudget: ptr(0)}}}, "test")
	require.NoError(t, err)
	n := w.notifier(fastRetry,
		notify.Sink{Name: "all", Webhook: all.srv.URL, Timeout: time.Minute},
		notify.Sink{Name: "failures", Webhook: failures.srv.URL, Timeout: time.Minute, Events: []string{notify.TypeMissionFailed}},
		notify.Sink{Name: "ours", Webhook: ours.srv.URL, Timeout: time.Minute, Voyages: []string{d.Voyage.ID}})
	w.escalate(d.Missions[0].ID, "about ours") // escalation.opened, voyage ours (its mission's)
	b := other.Missions[0]
	a, err := w.e.Acquire(w.ctx, engine.AcquireRequest{AgentID: "agent", MissionID: b.ID, Start: true})
	require.NoError(t, err)
	_, err = w.e.Fail(w.ctx, a.Fence(), engine.FailRequest{Failure: domain.Failure{Kind: "test", Summary: "boom"}}) // mission.failed, voyage other
	require.NoError(t, err)
	w.step(n)
	types := func(r *receiver) (out []string) {
		for _, q := range r.requests() {
			m := decode(t, q.body)
			out = append(out, m.Type+"@"+m.VoyageID)
		}
		return out
	}
	require.ElementsMatch(t, []string{notify.TypeEscalationOpened + "@" + d.Voyage.ID, notify.TypeMissionFailed + "@" + other.Voyage.ID}, types(all))
	require.Equal(t, []string{notify.TypeMissionFailed + "@" + other.Voyage.ID}, types(failures))
	require.Equal(t, []string{notify.TypeEscalationOpened + "@" + d.Voyage.ID}, types(ours))
}

// At least once across restarts: a notice that failed before the process stopped, and an
// event written while no notifier ran, are both delivered after the store is opened again by
// a new process's engine and notifier; a process that does not lead sends nothing.
func TestRestart_LosesNoUndeliveredNotification(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	rcv := newReceiver(t, http.StatusBadGateway)
	sink := notify.Sink{Name: "hook", Webhook: rcv.srv.URL, Timeout: time.Minute}
	first := w.escalate(w.mission(engine.MissionSpec{}).ID, "first")
	w.step(w.notifier(fastRetry, sink))
	require.Len(t, rcv.requests(), 1)
	require.Equal(t, engine.NoticeCounts{Pending: 1, Failing: 1}, w.counts())
	w.close() // the process stops with the notice undelivered …

	w.open() // … a follower opens the data dir while the leader is down …
	second := w.escalate(w.mission(engine.MissionSpec{}).ID, "second")
	follower := notify.New(w.e, []notify.Sink{sink}, fastRetry, func() bool { return false }, nil)
	require.NoError(t, follower.RunOnce(w.ctx))
	require.Len(t, rcv.requests(), 1, "only the leader sends")
	w.close()

	w.open() // … and the next leader delivers both.
	w.clock.Advance(5 * time.Second)
	w.step(w.notifier(fastRetry, sink))
	got := rcv.requests()
	require.Len(t, got, 3)
	require.Equal(t, first.ID, decode(t, got[1].body).EscalationID)
	require.Equal(t, second.ID, decode(t, got[2].body).EscalationID)
	require.Equal(t, engine.NoticeCounts{}, w.counts())
}

// A notice queued for a sink the configuration no longer has is given up at once, saying
// which; events older than give_up_after when first read are not sent, and the log says so.
func TestOutbox_UnknownSinkAndStaleEvents(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	rcv := newReceiver(t, http.StatusServiceUnavailable)
	w.escalate(w.mission(engine.MissionSpec{}).ID, "queued for old")
	w.step(w.notifier(fastRetry, notify.Sink{Name: "old", Webhook: rcv.srv.URL, Timeout: time.Minute}))
	require.Equal(t, engine.NoticeCounts{Pending: 1, Failing: 1}, w.counts())

	w.escalate(w.mission(engine.MissionSpec{}).ID, "long ago")
	w.clock.Advance(2 * time.Minute)
	n := w.notifier(fastRetry, notify.Sink{Name: "new", Webhook: rcv.srv.URL, Timeout: time.Minute})
	w.step(n)
	require.Equal(t, engine.NoticeCounts{GaveUp: 1}, w.counts())
	_, gave, err := w.e.NoticeSummary(w.ctx, 10)
	require.NoError(t, err)
	require.Contains(t, gave[0].LastError, `no [[notify]] section is named "old"`)
	require.Contains(t, w.logs.String(), "events older than give_up_after were not sent")
	require.Len(t, rcv.requests(), 1, "the stale event was not sent to the new sink")
}

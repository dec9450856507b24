package notify_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/notify"
)

// An escalation reaches a webhook on loopback as a signed JSON message; the receiver's 500 is
// retried after the backoff (not before), its 200 ends the delivery, and both attempts carry
// the same body, id and a signature the receiver verifies with its own HMAC.
func TestWebhook_SignedAndRetriedAfter500(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	rcv := newReceiver(t, http.StatusInternalServerError)
	const secret = "s3cret-for-the-test"
	n := w.notifier(fastRetry, notify.Sink{Name: "hook", Webhook: rcv.srv.URL + "/hook/T0KEN", Secret: secret, Timeout: 30 * time.Second})
	m := w.mission(engine.MissionSpec{})
	esc := w.escalate(m.ID, "which database should it use?")

	w.step(n)
	require.Len(t, rcv.requests(), 1)
	require.Equal(t, engine.NoticeCounts{Pending: 1, Failing: 1}, w.counts(), "a 500 is retried")
	require.Contains(t, w.logs.String(), "notification not delivered; retrying")
	require.Contains(t, w.logs.String(), "500 Internal Server Error")
	require.NotContains(t, w.logs.String(), "T0KEN", "a webhook's path (often its secret) is never logged")
	w.step(n)
	require.Len(t, rcv.requests(), 1, "not retried before its backoff passed")

	w.clock.Advance(5 * time.Second)
	w.step(n)
	got := rcv.requests()
	require.Len(t, got, 2)
	require.Equal(t, engine.NoticeCounts{}, w.counts(), "delivered: the outbox is empty")
	require.Equal(t, got[0].body, got[1].body, "a retry sends the same message")
	for _, r := range got {
		mac := hmac.New(sha256.New, []byte(secret))
		mac.Write(r.body)
		require.Equal(t, "sha256="+hex.EncodeToString(mac.Sum(nil)), r.headers.Get(notify.SignatureHeader))
		require.Equal(t, "application/json", r.headers.Get("Content-Type"))
		require.Equal(t, notify.TypeEscalationOpened, r.headers.Get(notify.EventHeader))
	}
	msg := decode(t, got[1].body)
	require.Equal(t, notify.TypeEscalationOpened, msg.Type)
	require.Equal(t, esc.ID, msg.EscalationID)
	require.Equal(t, m.ID, msg.MissionID)
	require.Equal(t, "escalation.raised", msg.Event)
	require.Contains(t, msg.Summary, "which database should it use?")
	require.Equal(t, msg.ID, got[1].headers.Get(notify.DeliveryHeader))
	// The log names the delivery by the id the receiver got, on the failure and the delivery.
	require.Contains(t, w.logs.String(), "notification not delivered; retrying\" sink=hook type="+notify.TypeEscalationOpened+" id="+msg.ID+" ")
	require.Contains(t, w.logs.String(), "notification delivered\" sink=hook type="+notify.TypeEscalationOpened+" id="+msg.ID+" attempts=2")
}

// A receiver that refuses the request for good (400) is not asked again: the notice is given
// up at once, logged as an error and listed for doctor; one that keeps failing is given up
// once give_up_after passed.
func TestWebhook_GivenUpAndSaidSo(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	refuse := newReceiver(t, http.StatusBadRequest)
	down := newReceiver(t, 503, 503, 503, 503, 503, 503, 503, 503, 503, 503, 503, 503, 503, 503, 503, 503, 503, 503, 503, 503)
	n := w.notifier(fastRetry, notify.Sink{Name: "refuses", Webhook: refuse.srv.URL, Timeout: 30 * time.Second},
		notify.Sink{Name: "down", Webhook: down.srv.URL, Timeout: 30 * time.Second})
	w.escalate(w.mission(engine.MissionSpec{}).ID, "stuck")
	w.step(n)
	require.Len(t, refuse.requests(), 1)
	require.Equal(t, engine.NoticeCounts{Pending: 1, Failing: 1, GaveUp: 1}, w.counts())
	for i := 0; i < 40 && w.counts().Pending > 0; i++ {
		w.clock.Advance(5 * time.Second)
		w.step(n)
	}
	require.Equal(t, engine.NoticeCounts{GaveUp: 2}, w.counts())
	require.Len(t, refuse.requests(), 1, "a refused notice is never sent again")
	require.GreaterOrEqual(t, len(down.requests()), 5, "retried until give_up_after")
	_, gave, err := w.e.NoticeSummary(w.ctx, 10)
	require.NoError(t, err)
	require.Len(t, gave, 2)
	for _, g := range gave {
		require.Contains(t, g.LastError, "answered")
	}
	require.Contains(t, w.logs.String(), "notification given up: it will not be sent")

	w.clock.Advance(notify.KeepGivenUp - time.Hour)
	w.step(n)
	require.Equal(t, engine.NoticeCounts{GaveUp: 2}, w.counts(), "kept for doctor")
	w.clock.Advance(2 * time.Hour)
	w.step(n)
	require.Equal(t, engine.NoticeCounts{}, w.counts(), "pruned once KeepGivenUp passed")
}

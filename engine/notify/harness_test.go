package notify_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/engine/notify"
	"github.com/mcp-scheduler/mcp-scheduler/storage/teststore"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var t0 = time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)

// world is one test's engine on a real SQLite file, with a fake clock (retries become due
// when the test advances it; deliveries themselves run in real time) and a log it can read.
type world struct {
	t     *testing.T
	ctx   context.Context
	path  string
	st    engine.Store
	e     *engine.Engine
	clock *engine.FakeClock
	logs  *syncBuffer
}

func newWorld(t *testing.T) *world {
	t.Helper()
	w := &world{t: t, ctx: context.Background(), path: teststore.Location(t), clock: engine.NewFakeClock(t0), logs: &syncBuffer{}}
	w.open()
	return w
}

// open opens (or reopens, after close: a restart) the store and an engine on it.
func (w *world) open() {
	w.t.Helper()
	st, err := teststore.Open(w.ctx, w.path)
	require.NoError(w.t, err)
	w.st = st
	w.t.Cleanup(func() { _ = st.Close() })
	w.e = engine.New(st, engine.Options{Clock: w.clock, DefaultRepository: "/repo",
		Backoff: engine.Backoff{Initial: time.Second, Max: time.Minute, Jitter: 0.01}})
}

func (w *world) close() {
	w.t.Helper()
	require.NoError(w.t, w.st.Close())
}

var fastRetry = notify.Options{RetryInitial: time.Second, RetryMax: 4 * time.Second, GiveUpAfter: time.Minute}

// notifier makes a leading notifier over sinks, logging into w.logs.
func (w *world) notifier(opt notify.Options, sinks ...notify.Sink) *notify.Notifier {
	log := slog.New(slog.NewTextHandler(w.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	return notify.New(w.e, sinks, opt, func() bool { return true }, log)
}

func (w *world) step(n *notify.Notifier) {
	w.t.Helper()
	require.NoError(w.t, n.RunOnce(w.ctx))
}

func (w *world) counts() engine.NoticeCounts {
	w.t.Helper()
	c, _, err := w.e.NoticeSummary(w.ctx, 10)
	require.NoError(w.t, err)
	return c
}

func (w *world) mission(spec engine.MissionSpec) domain.Mission {
	w.t.Helper()
	if spec.Title == "" {
		spec.Title = "mission"
	}
	c, err := w.e.CreateMission(w.ctx, spec, "test")
	require.NoError(w.t, err)
	return c.Mission
}

// escalate opens an escalation about mission id.
func (w *world) escalate(id, reason string) domain.Escalation {
	w.t.Helper()
	esc, err := w.e.Escalate(w.ctx, engine.EscalationSpec{MissionIDs: []string{id}, Route: domain.RouteMainAgent,
		Kind: "question", Reason: reason, DecisionRequired: "decide"}, "test")
	require.NoError(w.t, err)
	return esc
}

// receiver is a webhook receiver on 127.0.0.1 that answers each request with the next of
// statuses (then 200) and keeps what it got.
type receiver struct {
	srv      *httptest.Server
	mu       sync.Mutex
	statuses []int
	got      []request
}

type request struct {
	body    []byte
	headers http.Header
}

func newReceiver(t *testing.T, statuses ...int) *receiver {
	r := &receiver{statuses: statuses}
	r.srv = httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, req *http.Request) {
		body, err := io.ReadAll(req.Body)
		if err != nil || req.Method != http.MethodPost {
			http.Error(rw, "bad request", http.StatusBadRequest)
			return
		}
		r.mu.Lock()
		r.got = append(r.got, request{body: body, headers: req.Header.Clone()})
		status := http.StatusOK
		if len(r.statuses) > 0 {
			status, r.statuses = r.statuses[0], r.statuses[1:]
		}
		r.mu.Unlock()
		rw.WriteHeader(status)
		_, _ = rw.Write([]byte("answered " + http.StatusText(status)))
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) requests() []request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]request(nil), r.got...)
}

func decode(t *testing.T, b []byte) notify.Message {
	t.Helper()
	var m notify.Message
	require.NoError(t, json.Unmarshal(b, &m), "%s", b)
	return m
}

// syncBuffer is a bytes.Buffer safe for the notifier's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// openAt opens the store at w.path (benchmarks, which have no *testing.T for Cleanup).
func openAt(w *world) (engine.Store, error) { return teststore.Open(w.ctx, w.path) }

package tools

import (
	"context"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// DefaultWaitProgress is how often a waiting tool (dispatch with wait_seconds) reports
// progress at the longest when nothing changed: often enough that no proxy with a 60 s idle
// timeout cuts the call, and at least every 15 s as the MCP streams rule asks.
const DefaultWaitProgress = 15 * time.Second

// progress sends notifications/progress for one call, when (and only when) the client asked
// for them with a progress token in the request's _meta. The zero value sends nothing. It
// may be used from several goroutines (a waiting call's ticker and its change loop).
type progress struct {
	srv   *server.MCPServer
	token mcp.ProgressToken
	task  *taskRec // the task the call runs as (its status message follows the progress), or nil

	mu    sync.Mutex
	n     float64   // the last progress value sent
	total float64   // the last total sent (0: unknown)
	msg   string    // the last message sent
	at    time.Time // when the last notification was sent
}

func newProgress(ctx context.Context, req mcp.CallToolRequest) *progress {
	p := &progress{srv: server.ServerFromContext(ctx), task: taskFromContext(ctx)}
	if m := req.Params.Meta; m != nil {
		p.token = m.ProgressToken
	}
	return p
}

// heartbeatStep is how much a repeated ("still waiting") notification raises progress: a
// power of two, so sums stay exact, small enough that a 600 s wait at one beat per 200 ms
// still moves less than ten steps.
const heartbeatStep = 1.0 / 512

// send reports one step. Progress must grow with each notification (MCP spec), so the
// counter moves at least by one each time; total is omitted when unknown (0). A client that
// went away or a full notification queue only loses the notification.
func (p *progress) send(ctx context.Context, done, total float64, message string) {
	if p.task != nil {
		p.task.note(message)
	}
	if p.token == nil || p.srv == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if done <= p.n {
		done = p.n + 1
	}
	p.emitLocked(ctx, done, total, message)
}

// emitLocked records and sends one notification on the request's own stream (notify).
func (p *progress) emitLocked(ctx context.Context, done, total float64, message string) {
	p.n, p.total, p.msg, p.at = done, total, message, time.Now()
	params := map[string]any{"progressToken": p.token, "progress": done, "message": message}
	if total > 0 && total >= done {
		params["total"] = total
	}
	_ = notify(ctx, p.srv, string(mcp.MethodNotificationProgress), params)
}

// beat repeats the last message, progress raised by heartbeatStep, when nothing was sent
// for at least every.
func (p *progress) beat(ctx context.Context, every time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if time.Since(p.at) < every {
		return
	}
	msg := p.msg
	if msg == "" {
		msg = "waiting"
	}
	p.emitLocked(ctx, p.n+heartbeatStep, p.total, msg)
}

// keepAlive makes a waiting call never silent for longer than every: until stop is called
// (or ctx ends) it repeats the last notification whenever none was sent for that long. It
// does nothing when the client sent no progress token. stop waits for the ticker to end.
func (p *progress) keepAlive(ctx context.Context, every time.Duration) (stop func()) {
	if p.token == nil || p.srv == nil || every <= 0 {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		// Ticking at half the interval bounds the silence by every even when a change
		// notification reset the clock just after a tick.
		t := time.NewTicker(every / 2)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				p.beat(ctx, every)
			}
		}
	})
	return func() { close(done); wg.Wait() }
}

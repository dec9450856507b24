package runner

import (
	"encoding/json"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
)

// Process is one running (or re-attached) attempt. Read Events until it is closed; Wait
// returns the Outcome once everything was read. Stop ends the agent; Detach lets it run on
// unwatched (server shutdown). Methods are safe for concurrent use.
type Process struct {
	r        *Runner
	spec     Spec
	log      *slog.Logger
	rec      PIDRecord
	redact   *agent.Redactor
	launched bool            // started by this Runner (the shim is our child)
	shimDone <-chan struct{} // launched only: closed once our shim child was reaped
	stdin    *stdinWriter    // nil when attached or stdin is /dev/null

	events   chan Event
	exited   chan struct{} // the agent's group is gone; exit holds how it ended
	exit     agent.ExitStatus
	detached chan struct{}
	detach   sync.Once
	done     chan struct{} // outcome is final
	outcome  Outcome

	stderrDone chan struct{}
	superDone  chan struct{}
	tail       *tailBuffer
	outTail    *tailBuffer // the end of stdout, line by line

	lastOutput  atomic.Int64  // unix nanoseconds of the last output (stdout or stderr)
	firstOutput chan struct{} // closed at the first output
	firstOnce   sync.Once

	pings atomic.Int64 // agent.ping messages sent

	stopMu sync.Mutex
	reason atomic.Pointer[string]
}

func (r *Runner) newProcess(s Spec, rec PIDRecord, secrets []string) *Process {
	p := &Process{
		r:    r,
		spec: s,
		log: r.log.With("mission_id", s.Request.Start.MissionID, "attempt", s.Request.Start.Attempt,
			"epoch", s.Request.Start.Epoch, "agent_pid", rec.AgentPID),
		rec:         rec,
		redact:      agent.NewRedactor(secrets),
		events:      make(chan Event, 64),
		exited:      make(chan struct{}),
		detached:    make(chan struct{}),
		done:        make(chan struct{}),
		stderrDone:  make(chan struct{}),
		superDone:   make(chan struct{}),
		tail:        newTailBuffer(r.cfg.StderrTail),
		outTail:     newTailBuffer(r.cfg.OutputTail),
		firstOutput: make(chan struct{}),
	}
	p.lastOutput.Store(r.cfg.Now().UnixNano())
	return p
}

// PID returns the agent's process id (its process group has the same id).
func (p *Process) PID() int { return p.rec.AgentPID }

// Record returns the attempt's pid.json.
func (p *Process) Record() PIDRecord { return p.rec }

// Events returns the attempt's events in order. It is closed after the last one (the agent
// ended and its output was read to the end, or the Process was detached). Keep reading it:
// the runner waits for the reader, never the agent (its output goes to a file).
func (p *Process) Events() <-chan Event { return p.events }

// Done is closed when the Outcome is final.
func (p *Process) Done() <-chan struct{} { return p.done }

// Wait blocks until the attempt ended and its output was read (or the Process was detached)
// and returns the Outcome. Events must be read meanwhile.
func (p *Process) Wait() Outcome {
	<-p.done
	return p.outcome
}

// sawOutput records output of the agent at now.
func (p *Process) sawOutput(now time.Time) {
	p.lastOutput.Store(now.UnixNano())
	p.firstOnce.Do(func() { close(p.firstOutput) })
}

// LastOutput returns when the agent last wrote to stdout or stderr (or when it started).
func (p *Process) LastOutput() time.Time { return time.Unix(0, p.lastOutput.Load()) }

// Detach stops watching the attempt without stopping the agent: events end, Wait returns an
// Outcome with Detached set, and the agent goes on (it sees EOF on its stdin). A restarted
// scheduler finds it again with Attach. Use it on server shutdown.
func (p *Process) Detach() {
	p.detach.Do(func() {
		close(p.detached)
		if p.stdin != nil {
			p.stdin.close()
		}
	})
	<-p.done
}

// markExited records how the agent ended and releases its stdin.
func (p *Process) markExited(st agent.ExitStatus) {
	if r := p.reason.Load(); r != nil {
		st.Reason = *r
	}
	p.exit = st
	close(p.exited)
	if p.stdin != nil {
		p.stdin.close()
	}
}

// watchLaunched turns the end of our own shim into the exit status.
func (p *Process) watchLaunched(shimDone <-chan struct{}) {
	select {
	case <-shimDone:
	case <-p.detached:
		return
	}
	st := p.exitFromRecord()
	if !st.Known && !groupGone(p.rec.PGID) {
		// The shim died (killed from outside) and nobody will record or clean up the agent:
		// end its group now, so the mission is never handed on while it still runs.
		p.log.Error("agent shim ended without an exit record; killing the agent's process group", "pgid", p.rec.PGID)
		_ = signalGroup(p.rec.PGID, syscall.SIGKILL)
		if !p.waitGroupGone(p.rec.PGID, killWait) {
			p.log.Error("agent process group survived SIGKILL", "pgid", p.rec.PGID)
		}
	}
	p.markExited(st)
}

// exitFromRecord reads exit.json; without it (the shim was killed) the end is unknown.
func (p *Process) exitFromRecord() agent.ExitStatus {
	rec, ok, err := readExit(p.spec.AttemptDir)
	if err != nil {
		p.log.Error("unreadable exit record", "err", err)
	}
	if !ok {
		return agent.ExitStatus{Known: false, Code: -1}
	}
	return agent.ExitStatus{Known: true, Code: rec.Code, Signal: rec.Signal}
}

// stdinWriter writes protocol messages to the agent's stdin from one goroutine, so no
// caller ever blocks on an agent that does not read.
type stdinWriter struct {
	f      *os.File
	mu     sync.Mutex
	ch     chan stdinItem
	closed bool
	done   chan struct{}
}

// stdinItem is one queued message, or (b nil) a flush marker closed once everything queued
// before it was written.
type stdinItem struct {
	b       []byte
	flushed chan struct{}
}

func newStdinWriter(f *os.File) *stdinWriter {
	w := &stdinWriter{f: f, ch: make(chan stdinItem, 16), done: make(chan struct{})}
	go w.loop()
	return w
}

func (w *stdinWriter) loop() {
	defer close(w.done)
	failed := false
	for it := range w.ch {
		if it.flushed != nil {
			close(it.flushed)
			continue
		}
		if failed {
			continue
		}
		if _, err := w.f.Write(it.b); err != nil {
			failed = true // the agent is gone or closed its stdin
		}
	}
}

// send queues one message; it reports false when the message was dropped (closed, or the
// queue is full because the agent does not read).
func (w *stdinWriter) send(msg any) bool {
	b, err := json.Marshal(msg)
	if err != nil {
		return false
	}
	return w.queue(stdinItem{b: append(b, '\n')})
}

func (w *stdinWriter) queue(it stdinItem) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return false
	}
	select {
	case w.ch <- it:
		return true
	default:
		return false
	}
}

// flush waits up to timeout until every message queued so far is in the pipe (the kernel
// holds it for the agent even if this process dies next); it reports whether they are.
func (w *stdinWriter) flush(timeout time.Duration) bool {
	done := make(chan struct{})
	if !w.queue(stdinItem{flushed: done}) {
		return false
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-done:
		return true
	case <-t.C:
		return false
	}
}

// close closes the pipe (the agent sees EOF) and ends the writer.
func (w *stdinWriter) close() {
	w.mu.Lock()
	if !w.closed {
		w.closed = true
		close(w.ch)
		_ = w.f.Close() // unblocks a pending Write
	}
	w.mu.Unlock()
	<-w.done
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func newTailBuffer(max int) *tailBuffer { return &tailBuffer{max: max} }

func (t *tailBuffer) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(b)
	if len(b) >= t.max {
		t.buf = append(t.buf[:0], b[len(b)-t.max:]...)
		return n, nil
	}
	if over := len(t.buf) + len(b) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	t.buf = append(t.buf, b...)
	return n, nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}

package runner

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
)

// maxLoggedBadLines is how many not-understood lines of one attempt are logged one by one;
// the rest are only counted (a program printing garbage must not flood the log).
const maxLoggedBadLines = 20

// startFollowing starts the goroutines that follow stdout and stderr and supervise the
// process.
func (p *Process) startFollowing() {
	wakeOut, unsub := p.r.watch.subscribe(p.spec.AttemptDir)
	go p.followStderr()
	go p.supervise()
	go func() {
		defer unsub()
		p.followStdout(wakeOut)
	}()
}

// follower re-reads a growing file whenever woken, polled, or told the writer is gone.
type follower struct {
	p    *Process
	wake <-chan struct{}
	tick *time.Ticker
}

// waitMore blocks until the file may have grown. final reports that the writers are gone:
// read to the end one last time.
func (f follower) waitMore() (final, detached bool) {
	select {
	case <-f.wake:
	case <-f.tick.C:
	case <-f.p.exited:
		return true, false
	case <-f.p.detached:
		return false, true
	}
	return false, false
}

// openFollowed opens a file of the attempt; a missing file reads as empty (an agent lost
// before it wrote anything).
func openFollowed(dir, name string) (io.ReadCloser, error) {
	f, err := os.Open(filepath.Join(dir, name))
	if errors.Is(err, fs.ErrNotExist) {
		return io.NopCloser(strings.NewReader("")), nil
	}
	return f, err
}

// followStdout feeds stdout lines to the adapter's decoder and delivers events until the
// agent ended, then computes the Outcome.
func (p *Process) followStdout(wake <-chan struct{}) {
	defer close(p.done)
	dec := p.spec.Adapter.NewDecoder()
	out := &p.outcome
	f, err := openFollowed(p.spec.AttemptDir, FileStdout)
	if err != nil {
		p.log.Error("cannot read agent stdout", "err", err)
		f = io.NopCloser(strings.NewReader(""))
	}
	defer f.Close()
	lr := agent.NewLineReader(f, p.r.cfg.MaxLine)
	lr.SetFollow(true)
	fl := follower{p: p, wake: wake, tick: time.NewTicker(p.r.cfg.PollInterval)}
	defer fl.tick.Stop()

	for final := false; ; {
		if !p.readLines(lr, dec, out) {
			p.finishDetached()
			return
		}
		if final {
			lr.Finish()
			if !p.readLines(lr, dec, out) {
				p.finishDetached()
				return
			}
			break
		}
		var detached bool
		if final, detached = fl.waitMore(); detached {
			p.finishDetached()
			return
		}
	}
	out.Offset = lr.Offset()
	<-p.stderrDone
	<-p.superDone
	close(p.events)
	p.finish(dec)
}

// readLines reads every complete line available now; false means the Process was detached
// while delivering.
func (p *Process) readLines(lr *agent.LineReader, dec agent.Decoder, out *Outcome) bool {
	for {
		line, err := lr.Next()
		if err == io.EOF {
			return true
		}
		now := p.r.cfg.Now()
		ev := Event{Time: now, Offset: lr.Offset()}
		var tooLong *agent.LineTooLongError
		switch {
		case errors.As(err, &tooLong):
			out.CutLines++
			ev.Kind, ev.Err, ev.Size = EventLineTooLong, err, tooLong.Size
			p.log.Warn("agent stdout line over the limit, cut", "offset", tooLong.Offset, "size", tooLong.Size,
				"limit", tooLong.Limit, "start", p.redact.String(string(tooLong.Prefix)))
		case err != nil:
			p.log.Error("reading agent stdout", "err", err)
			return true // retried on the next wake-up
		default:
			ev.Size = int64(len(line))
		}
		p.sawOutput(now)
		p.keepOutput(line, tooLong)
		replay := ev.Offset <= p.spec.FromOffset
		if ev.Kind == EventLineTooLong {
			if !replay && !p.deliver(ev) {
				return false
			}
			continue
		}
		msgs, derr := dec.Line(p.redact.Bytes(line))
		if derr != nil {
			out.BadLines++
			if out.BadLines <= maxLoggedBadLines {
				p.log.Warn("agent stdout line not understood", "offset", ev.Offset-ev.Size-1, "err", p.redact.String(derr.Error()),
					"line", p.redact.String(clip(string(line), 200)))
			}
			ev.Kind, ev.Err = EventBadLine, fmt.Errorf("line not understood: %w", derr)
			if !replay && !p.deliver(ev) {
				return false
			}
			continue
		}
		for _, m := range msgs {
			out.Messages++
			ev.Kind, ev.Message = EventMessage, m
			if !replay && !p.deliver(ev) {
				return false
			}
		}
	}
}

// deliver sends one event; false when the Process was detached meanwhile.
func (p *Process) deliver(ev Event) bool {
	select {
	case p.events <- ev:
		return true
	case <-p.detached:
		return false
	}
}

// finish computes the Outcome once the agent ended and everything was read.
func (p *Process) finish(dec agent.Decoder) {
	out := &p.outcome
	out.Exit = p.exit
	out.StderrTail = p.tail.String()
	out.OutputTail = p.outTail.String()
	res := dec.End(p.exit)
	if err := res.Check(); err != nil {
		out.ResultProblem = err.Error()
		p.log.Warn("agent result breaks the protocol", "err", err)
		res = agent.ProtocolFailure(res, err)
	}
	out.Result = res
	if out.BadLines > maxLoggedBadLines {
		p.log.Warn("agent stdout lines not understood", "count", out.BadLines)
	}
}

// finishDetached ends the event stream of a detached Process.
func (p *Process) finishDetached() {
	<-p.stderrDone
	<-p.superDone
	close(p.events)
	p.outcome.Detached = true
	p.outcome.StderrTail = p.tail.String()
	p.outcome.OutputTail = p.outTail.String()
}

// followStderr copies stderr, redacted, to the mission log and the tail buffer.
func (p *Process) followStderr() {
	defer close(p.stderrDone)
	wake, unsub := p.r.watch.subscribe(p.spec.AttemptDir)
	defer unsub()
	f, err := openFollowed(p.spec.AttemptDir, FileStderr)
	if err != nil {
		p.log.Error("cannot read agent stderr", "err", err)
		return
	}
	defer f.Close()
	fl := follower{p: p, wake: wake, tick: time.NewTicker(p.r.cfg.PollInterval)}
	defer fl.tick.Stop()
	s := &stderrSink{p: p, log: p.spec.Log, hold: max(p.redact.MaxLen()-1, 0)}
	buf := make([]byte, 32<<10)
	for {
		final, detached := false, false
		for {
			n, err := f.Read(buf)
			if n > 0 {
				p.sawOutput(p.r.cfg.Now())
				s.write(buf[:n])
			}
			if err != nil || n == 0 {
				break
			}
		}
		select {
		case <-p.exited:
			final = true
		default:
		}
		if final {
			// Read what the agent wrote last, then flush what was held back.
			if _, err := io.CopyBuffer(writerFunc(s.write), f, buf); err != nil {
				p.log.Error("reading agent stderr", "err", err)
			}
			s.flush()
			return
		}
		if _, detached = fl.waitMore(); detached {
			s.flush()
			return
		}
	}
}

// stderrSink redacts stderr chunk by chunk, holding back the last MaxLen-1 bytes so a secret
// split between two reads is still found.
type stderrSink struct {
	p       *Process
	log     io.Writer
	hold    int
	pending []byte
	logErr  bool
}

func (s *stderrSink) write(b []byte) {
	if s.hold == 0 {
		s.emit(b)
		return
	}
	s.pending = s.p.redact.Bytes(append(s.pending, b...))
	if cut := len(s.pending) - s.hold; cut > 0 {
		s.emit(s.pending[:cut])
		s.pending = append(s.pending[:0], s.pending[cut:]...)
	}
}

func (s *stderrSink) flush() {
	if len(s.pending) > 0 {
		s.emit(s.pending)
		s.pending = nil
	}
}

func (s *stderrSink) emit(b []byte) {
	_, _ = s.p.tail.Write(b)
	if s.log == nil || s.logErr {
		return
	}
	if _, err := s.log.Write(b); err != nil {
		s.logErr = true
		s.p.log.Error("mission log write failed; agent stderr no longer copied", "err", err)
	}
}

type writerFunc func([]byte)

func (w writerFunc) Write(b []byte) (int, error) { w(b); return len(b), nil }

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// keepOutput adds one stdout line (redacted) to the output tail; a line over the cap is kept
// as its start and its size.
func (p *Process) keepOutput(line []byte, tooLong *agent.LineTooLongError) {
	if tooLong != nil {
		line = []byte(fmt.Sprintf("%s… (a line of %d bytes, cut)", clip(string(tooLong.Prefix), 200), tooLong.Size))
	}
	_, _ = p.outTail.Write(append(p.redact.Bytes(line), '\n'))
}

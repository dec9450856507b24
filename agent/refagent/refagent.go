package refagent

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
)

// Subcommand is the subcommand of our binary that runs Main: `mcp-scheduler reference-agent`.
// The agent re-runs itself with it (plus --grandchild) to spawn grandchildren.
const Subcommand = "reference-agent"

// Exit codes of Main.
const (
	ExitOK         = 0   // completed, blocked, yielded, or cancelled by agent.cancel
	ExitFailed     = 1   // reported worker.result failed
	ExitUsage      = 2   // bad arguments, no agent.start, or a broken script
	ExitTerminated = 143 // stopped by SIGTERM (128 + 15)
)

// Main runs the reference agent. It reads agent.start from stdin (or, when stdin ends first,
// builds it from --mission, --workspace, --brief-file and --attempt, for the command
// runtime), then runs the script: the directives in the brief followed by those in
// --script, or the default plan when there are none (write <mission>.md with the brief's
// first line, commit it, report completed). It answers agent.ping with agent.heartbeat,
// stops on agent.cancel or SIGTERM with worker.result "cancelled", and keeps working when
// stdin reaches EOF (the scheduler went away). Messages go to stdout, one per line;
// diagnostics to stderr.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet(Subcommand, flag.ContinueOnError)
	fs.SetOutput(stderr)
	script := fs.String("script", "", "file with more directives, run after those in the brief")
	mission := fs.String("mission", "", "mission id when no agent.start arrives on stdin")
	workspace := fs.String("workspace", "", "workspace when no agent.start arrives on stdin (default: the working directory)")
	briefFile := fs.String("brief-file", "", "brief when no agent.start arrives on stdin")
	attempt := fs.Int("attempt", 1, "attempt number when no agent.start arrives on stdin")
	grandchild := fs.Bool("grandchild", false, "internal: sleep until killed (a grandchild for supervision tests)")
	if err := fs.Parse(args); err != nil {
		return ExitUsage
	}
	if *grandchild {
		time.Sleep(24 * time.Hour)
		return ExitOK
	}

	a := &refAgent{out: &emitter{w: stdout}, stderr: stderr, cancel: make(chan struct{})}
	lines := agent.NewLineReader(stdin, agent.DefaultMaxLine)
	start, err := readStart(lines)
	if errors.Is(err, io.EOF) {
		start, err = startFromFlags(*mission, *workspace, *briefFile, *attempt)
	}
	if err != nil {
		fmt.Fprintf(stderr, "reference-agent: %v\n", err)
		return ExitUsage
	}
	a.start = start
	a.ws = start.Workspace
	if a.ws == "" {
		if a.ws, err = os.Getwd(); err != nil {
			fmt.Fprintf(stderr, "reference-agent: %v\n", err)
			return ExitUsage
		}
	}
	var scriptText string
	if *script != "" {
		b, err := os.ReadFile(*script)
		if err != nil {
			fmt.Fprintf(stderr, "reference-agent: script: %v\n", err)
			return ExitUsage
		}
		scriptText = string(b)
	}

	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGTERM)
	defer signal.Stop(sigs)
	stopInputs := make(chan struct{})
	var inputs sync.WaitGroup
	inputs.Add(1)
	go func() { defer inputs.Done(); a.watchSignals(sigs, stopInputs) }()
	go a.readControl(lines) // ends at EOF; never waited for: stdin may stay open forever

	code := a.run(start.Brief, scriptText)
	close(stopInputs)
	inputs.Wait()
	return code
}

// readStart reads the first line of stdin, which must be agent.start.
func readStart(lines *agent.LineReader) (agent.Start, error) {
	var st agent.Start
	line, err := lines.Next()
	if err != nil {
		return st, err
	}
	if err := json.Unmarshal(line, &st); err != nil {
		return st, fmt.Errorf("first stdin line is not JSON: %w", err)
	}
	if st.Type != agent.TypeStart {
		return st, fmt.Errorf("first stdin line is %q, not %s", st.Type, agent.TypeStart)
	}
	return st, nil
}

func startFromFlags(mission, workspace, briefFile string, attempt int) (agent.Start, error) {
	if mission == "" {
		return agent.Start{}, errors.New("no agent.start on stdin and no --mission")
	}
	st := agent.Start{Type: agent.TypeStart, Protocol: agent.Version, MissionID: mission, Attempt: attempt, Workspace: workspace}
	if briefFile != "" {
		b, err := os.ReadFile(briefFile)
		if err != nil {
			return st, fmt.Errorf("brief: %w", err)
		}
		st.Brief = string(b)
	}
	return st, nil
}

// refAgent is one run of the reference agent.
type refAgent struct {
	start  agent.Start
	ws     string
	out    *emitter
	stderr io.Writer

	cancel        chan struct{} // closed by the first agent.cancel or SIGTERM
	mu            sync.Mutex
	cancelReason  string
	ignoreSigterm bool
	deaf          bool // @deaf: agent.ping goes unanswered (a wedged agent)
	terminated    bool // the cancellation came from SIGTERM
	yielding      bool // the cancellation is an agent.yield: stop with task.yield

	written   []string // workspace-relative paths written and not yet committed
	artifacts []string // every path written
	commits   []string
	heartbeat *heartbeat

	resolveRan      bool     // @resolve ran: @done without text says what it found
	resolved        []string // the files @resolve rewrote
	commitsAtResolv int      // len(commits) when @resolve ran
}

// watchSignals turns SIGTERM into a cancellation, unless @ignore-sigterm was run.
func (a *refAgent) watchSignals(sigs <-chan os.Signal, stop <-chan struct{}) {
	for {
		select {
		case <-sigs:
			a.requestCancel("SIGTERM", true)
		case <-stop:
			return
		}
	}
}

// readControl handles scheduler → agent messages after agent.start. EOF means the
// scheduler went away: the agent keeps working.
func (a *refAgent) readControl(lines *agent.LineReader) {
	for {
		line, err := lines.Next()
		if errors.Is(err, agent.ErrLineTooLong) {
			continue
		}
		if err != nil {
			return
		}
		var m struct {
			Type   string `json:"type"`
			Seq    int64  `json:"seq"`
			Reason string `json:"reason"`
		}
		if json.Unmarshal(line, &m) != nil {
			continue
		}
		switch m.Type {
		case agent.TypePing:
			a.mu.Lock()
			deaf := a.deaf
			a.mu.Unlock()
			if !deaf {
				a.out.send(map[string]any{"type": agent.TypeHeartbeat, "message": fmt.Sprintf("pong %d", m.Seq)})
			}
		case agent.TypeCancel:
			a.requestCancel("agent.cancel: "+m.Reason, false)
		case agent.TypeYieldRequest:
			a.requestYield("agent.yield: " + m.Reason)
		}
	}
}

// requestYield stops the script at its next step boundary with task.yield (preemption).
func (a *refAgent) requestYield(reason string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.cancelReason == "" {
		a.cancelReason, a.yielding = reason, true
		close(a.cancel)
	}
}

func (a *refAgent) requestCancel(reason string, sigterm bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.ignoreSigterm {
		a.out.send(agent.Message{Type: agent.TypeLog, Level: "warn", Message: "ignoring " + reason})
		return
	}
	if a.cancelReason == "" {
		a.cancelReason, a.terminated = reason, sigterm
		close(a.cancel)
	}
}

// emitter writes one protocol message per line, each with a single Write.
type emitter struct {
	mu sync.Mutex
	w  io.Writer
}

func (e *emitter) send(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		b, _ = json.Marshal(agent.Message{Type: agent.TypeLog, Level: "error", Message: "encode: " + err.Error()})
	}
	e.raw(append(b, '\n'))
}

func (e *emitter) raw(b []byte) {
	e.mu.Lock()
	defer e.mu.Unlock()
	_, _ = e.w.Write(b)
}

func (e *emitter) log(level, msg string) {
	e.send(agent.Message{Type: agent.TypeLog, Level: level, Message: msg})
}

func (e *emitter) result(r agent.WorkerResult) {
	e.send(agent.Message{Type: agent.TypeResult, WorkerResult: &r})
}

// heartbeat sends agent.heartbeat every interval until stopped.
type heartbeat struct {
	stop chan struct{}
	done chan struct{}
}

func startHeartbeat(out *emitter, every time.Duration) *heartbeat {
	h := &heartbeat{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(h.done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				out.send(agent.Message{Type: agent.TypeHeartbeat})
			case <-h.stop:
				return
			}
		}
	}()
	return h
}

func (h *heartbeat) halt() {
	if h != nil {
		close(h.stop)
		<-h.done
	}
}

// defaultPlan is the script of a brief without directives.
func defaultPlan(st agent.Start) []directive {
	first := strings.TrimSpace(strings.SplitN(strings.TrimSpace(st.Brief), "\n", 2)[0])
	if first == "" {
		first = st.Title
	}
	name := safeName(st.MissionID) + ".md"
	title := st.Title
	if title == "" {
		title = first
	}
	return []directive{
		{name: "write", args: []string{name}, text: first + "\n"},
		{name: "commit", text: st.MissionID + ": " + title},
		{name: "done", text: "wrote " + name + " with the brief's first line and committed it"},
	}
}

// safeName keeps [A-Za-z0-9._-] of s (a file name from a mission id).
func safeName(s string) string {
	s = strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.' {
			return r
		}
		return '_'
	}, s)
	s = strings.TrimLeft(s, ".")
	if s == "" {
		return "mission"
	}
	return filepath.Base(s)
}

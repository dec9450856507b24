package refagent

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
)

// errEnd stops the script after a directive that ended the attempt; code is the exit code.
type errEnd struct{ code int }

func (e errEnd) Error() string { return "end of attempt (exit " + strconv.Itoa(e.code) + ")" }

// checkpointBody is what the reference agent saves in task.checkpoint and task.yield.
type checkpointBody struct {
	Step int    `json:"step"` // directives already done
	Note string `json:"note,omitempty"`
}

// run executes the script (the brief's lines, then the --script file's) and returns the exit
// code. The whole script is parsed and checked first: a broken one does nothing (exit 2).
func (a *refAgent) run(brief, script string) int {
	defer func() { a.heartbeat.halt() }()
	steps, err := scriptFor(a.start, append(briefLines(brief), scriptLines(script)...))
	if err != nil {
		return a.brokenScript(err)
	}
	from := a.resumeStep(len(steps))
	if from > 0 {
		a.out.log("info", fmt.Sprintf("resuming from checkpoint: skipping steps 1-%d already done", from))
	}
	for i, d := range steps {
		if i < from {
			if directives[d.name].state {
				if err := a.do(i, d); err != nil {
					return a.stepFailed(d, err)
				}
			}
			continue
		}
		if reason, ok := a.cancelled(); ok {
			return a.stopAt(i, reason)
		}
		err := a.do(i, d)
		var end errEnd
		switch {
		case errors.As(err, &end):
			return end.code
		case errors.Is(err, errCancelled):
			reason, _ := a.cancelled()
			return a.stopAt(i, reason)
		case err != nil:
			return a.stepFailed(d, err)
		}
	}
	if reason, ok := a.cancelled(); ok {
		return a.cancelledResult(reason)
	}
	a.out.result(agent.WorkerResult{Status: agent.StatusCompleted, Summary: "script done", Artifacts: a.artifacts, Evidence: a.commits})
	return ExitOK
}

// brokenScript reports a script that cannot run (nothing was done) and returns ExitUsage.
func (a *refAgent) brokenScript(err error) int {
	f := agent.Failure{Kind: agent.KindError, Tool: "script", Diagnostic: err.Error(), Summary: "the script is broken, nothing was done: " + err.Error()}
	var broken *scriptError
	if errors.As(err, &broken) {
		f.Tool, f.Location = broken.tool, broken.at.location()
	}
	a.out.result(agent.WorkerResult{Status: agent.StatusFailed, Summary: f.Summary, Failure: &f})
	return ExitUsage
}

// resumeStep reads the step to resume from out of agent.start's checkpoint (0 when none).
func (a *refAgent) resumeStep(n int) int {
	if len(a.start.Checkpoint) == 0 {
		return 0
	}
	var cp checkpointBody
	if err := json.Unmarshal(a.start.Checkpoint, &cp); err != nil || cp.Step < 0 {
		a.out.log("warn", "checkpoint not understood, starting over: "+string(a.start.Checkpoint))
		return 0
	}
	return min(cp.Step, n)
}

var errCancelled = errors.New("cancelled")

// cancelled reports whether the attempt was cancelled, and why.
func (a *refAgent) cancelled() (string, bool) {
	select {
	case <-a.cancel:
		a.mu.Lock()
		defer a.mu.Unlock()
		return a.cancelReason, true
	default:
		return "", false
	}
}

// stopAt ends the run before step i: with task.yield and a checkpoint when the scheduler asked
// for a yield (agent.yield), else with a cancelled result.
func (a *refAgent) stopAt(i int, reason string) int {
	a.mu.Lock()
	yielding := a.yielding
	a.mu.Unlock()
	if !yielding {
		return a.cancelledResult(reason)
	}
	b, _ := json.Marshal(checkpointBody{Step: i, Note: reason})
	a.out.send(agent.Message{Type: agent.TypeYield, Reason: "preempted", Checkpoint: b, Message: reason})
	return ExitOK
}

func (a *refAgent) cancelledResult(reason string) int {
	a.out.result(agent.WorkerResult{Status: agent.StatusCancelled, Summary: "cancelled (" + reason + ")", Artifacts: a.artifacts, Evidence: a.commits})
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.terminated {
		return ExitTerminated
	}
	return ExitOK
}

func (a *refAgent) stepFailed(d directive, err error) int {
	a.out.result(agent.WorkerResult{Status: agent.StatusFailed, Summary: fmt.Sprintf("@%s failed: %v", d.name, err),
		Artifacts: a.artifacts, Evidence: a.commits,
		Failure: &agent.Failure{Kind: agent.KindError, Tool: "@" + d.name, Diagnostic: err.Error(), Location: d.at.location()}})
	return ExitFailed
}

// wait sleeps d, or until cancelled.
func (a *refAgent) wait(d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-a.cancel:
		return errCancelled
	}
}

// do runs step i.
func (a *refAgent) do(i int, d directive) error {
	switch d.name {
	case "write", "append":
		return a.writeFile(d.args[0], d.text, d.name == "append")
	case "symlink":
		return a.symlink(d.args[0], d.text)
	case "commit":
		return a.commit(d.text)
	case "resolve":
		return a.resolve()
	case "flaky":
		n, err := attemptCount(d.args[0])
		if err != nil {
			return err
		}
		if a.start.Attempt <= n {
			return a.do(i, directive{at: d.at, name: "fail", args: d.args[1:], text: d.text})
		}
	case "rate-limited":
		return a.rateLimited(d)
	case "sleep":
		dur, err := parseDuration(d.args[0])
		if err != nil {
			return err
		}
		return a.wait(dur)
	case "hang":
		return a.wait(100 * 365 * 24 * time.Hour)
	case "heartbeat":
		dur, err := parseDuration(d.args[0])
		if err != nil {
			return err
		}
		a.heartbeat.halt()
		a.heartbeat = nil
		if dur > 0 {
			a.heartbeat = startHeartbeat(a.out, dur)
		}
	case "usage":
		return a.usage(d.args)
	case "progress":
		pct, err := parsePercent(d.args[0])
		if err != nil {
			return err
		}
		a.out.send(agent.Message{Type: agent.TypeProgress, Percent: &pct, Message: d.text})
	case "log":
		a.out.log(d.args[0], d.text)
	case "checkpoint":
		b, _ := json.Marshal(checkpointBody{Step: i + 1, Note: d.text})
		a.out.send(agent.Message{Type: agent.TypeCheckpoint, Checkpoint: b, Message: d.text})
	case "yield":
		b, _ := json.Marshal(checkpointBody{Step: i + 1, Note: d.text})
		a.out.send(agent.Message{Type: agent.TypeYield, Checkpoint: b, Reason: d.text, Message: "yielding: " + d.text})
		return errEnd{ExitOK}
	default:
		return a.doEnding(d)
	}
	return nil
}

// doEnding runs the directives that end the attempt or misbehave on purpose.
func (a *refAgent) doEnding(d directive) error {
	switch d.name {
	case "fail":
		a.out.result(agent.WorkerResult{Status: agent.StatusFailed, Summary: d.text, Artifacts: a.artifacts, Evidence: a.commits,
			Failure: &agent.Failure{Kind: d.args[0], Summary: d.text}})
		return errEnd{ExitFailed}
	case "block":
		a.out.result(agent.WorkerResult{Status: agent.StatusBlocked, Summary: "blocked: needs a decision: " + d.text, Decision: d.text,
			Failure: &agent.Failure{Kind: agent.KindError, Summary: "needs a decision: " + d.text}})
		return errEnd{ExitOK}
	case "verdict":
		r := agent.WorkerResult{Status: agent.StatusCompleted, Summary: d.text, Verdict: d.args[0]}
		if d.args[0] == agent.VerdictMinor || d.args[0] == agent.VerdictSevere {
			r.Findings = []agent.Finding{{Severity: d.args[0], Message: cmpOr(d.text, "a "+d.args[0]+" finding")}}
		}
		a.out.result(r)
		return errEnd{ExitOK}
	case "done":
		a.out.result(agent.WorkerResult{Status: agent.StatusCompleted, Summary: cmpOr(d.text, a.doneSummary()), Artifacts: a.artifacts, Evidence: a.commits})
		return errEnd{ExitOK}
	case "result":
		a.out.raw([]byte(`{"type":"worker.result",` + strings.TrimPrefix(strings.TrimSpace(d.text), "{") + "\n"))
		return errEnd{ExitOK}
	case "crash":
		code, err := exitCode(d.args)
		if err != nil {
			return err
		}
		return errEnd{code}
	case "ignore-sigterm":
		a.mu.Lock()
		a.ignoreSigterm = true
		a.mu.Unlock()
	case "deaf":
		a.mu.Lock()
		a.deaf = true
		a.mu.Unlock()
	case "spawn-grandchild":
		return a.spawnGrandchildren(d.args)
	case "big-line":
		n, err := parseSize(d.args[0])
		if err != nil {
			return err
		}
		a.out.send(agent.Message{Type: agent.TypeLog, Level: "info", Message: strings.Repeat("x", n)})
	case "garbage":
		a.out.raw([]byte(cmpOr(d.text, "this is not JSON {{{") + "\n"))
	case "raw":
		a.out.raw([]byte(d.text))
	case "stderr":
		n, err := parseSize(d.args[0])
		if err != nil {
			return err
		}
		writeStderr(a.stderr, n)
	case "env":
		v, ok := os.LookupEnv(d.args[0])
		msg := "env " + d.args[0] + " is unset"
		if ok {
			msg = "env " + d.args[0] + "=" + v
		}
		a.out.log("info", msg)
		fmt.Fprintln(a.stderr, msg)
	default:
		return fmt.Errorf("directive @%s is not implemented", d.name)
	}
	return nil
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// writeStderr writes n bytes to w in lines of 100.
func writeStderr(w interface{ Write([]byte) (int, error) }, n int) {
	line := []byte(strings.Repeat("e", 99) + "\n")
	for n > 0 {
		k := min(n, len(line))
		chunk := line[:k]
		if k < len(line) {
			chunk = append([]byte(strings.Repeat("e", k-1)), '\n')
		}
		_, _ = w.Write(chunk)
		n -= k
	}
}

// spawnGrandchildren starts n copies of ourselves with --grandchild, in our process group.
func (a *refAgent) spawnGrandchildren(args []string) error {
	n, err := grandchildCount(args)
	if err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find own binary: %w", err)
	}
	for range n {
		cmd := exec.Command(self, Subcommand, "--grandchild")
		if err := cmd.Start(); err != nil {
			return fmt.Errorf("start grandchild: %w", err)
		}
		// Never waited for: it is meant to outlive us, until the supervisor ends the group.
		a.out.log("info", fmt.Sprintf("grandchild pid=%d", cmd.Process.Pid))
		_ = cmd.Process.Release()
	}
	return nil
}

// writeFile writes or appends text to a workspace-relative path.
func (a *refAgent) writeFile(rel, text string, appendTo bool) error {
	if err := localPath(rel); err != nil {
		return err
	}
	p := filepath.Join(a.ws, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	flags := os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	if appendTo {
		flags = os.O_WRONLY | os.O_CREATE | os.O_APPEND
	}
	f, err := os.OpenFile(p, flags, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(text); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if !contains(a.written, rel) {
		a.written = append(a.written, rel)
	}
	if !contains(a.artifacts, rel) {
		a.artifacts = append(a.artifacts, rel)
	}
	a.out.log("info", fmt.Sprintf("wrote %s (%d bytes)", rel, len(text)))
	return nil
}

// symlink makes rel a symbolic link to target (`ln -s target rel`); the link counts as
// written, so @commit stages it.
func (a *refAgent) symlink(rel, target string) error {
	if err := localPath(rel); err != nil {
		return err
	}
	p := filepath.Join(a.ws, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	if err := os.Symlink(target, p); err != nil {
		return err
	}
	if !contains(a.written, rel) {
		a.written = append(a.written, rel)
	}
	a.out.log("info", fmt.Sprintf("linked %s -> %s", rel, target))
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// rateLimited is @rate-limited N RESET [SUMMARY]: while the attempt number is at most N, a
// task.rate_limit rejected whose window resets RESET (a duration) from now, then a failed
// worker.result of kind rate_limit; later attempts go on.
func (a *refAgent) rateLimited(d directive) error {
	n, err := attemptCount(d.args[0])
	if err != nil {
		return err
	}
	reset, err := parseDuration(d.args[1])
	if err != nil {
		return err
	}
	if a.start.Attempt > n {
		return nil
	}
	a.out.send(agent.Message{Type: agent.TypeRateLimit, RateLimit: &agent.RateLimit{Status: agent.RateRejected,
		ResetsAt: time.Now().Add(reset).UTC(), LimitType: "five_hour"}})
	return a.do(0, directive{at: d.at, name: "fail", args: []string{agent.KindRateLimit}, text: cmpOr(d.text, "the usage window is exhausted")})
}

// usage sends task.usage with the attempt's usage so far: INPUT_TOKENS OUTPUT_TOKENS COST_USD
// (cumulative, as the protocol's reports are), for budget demos and tests.
func (a *refAgent) usage(args []string) error {
	u, err := parseUsage(args)
	if err != nil {
		return err
	}
	a.out.send(agent.UsageMessage(u))
	return nil
}

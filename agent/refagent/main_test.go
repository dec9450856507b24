package refagent

import (
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
	"github.com/mcp-scheduler/mcp-scheduler/prompts"

	"github.com/mcp-scheduler/mcp-scheduler/e2e/testenv"
)

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == Subcommand {
		os.Exit(Main(os.Args[2:], os.Stdin, os.Stdout, os.Stderr))
	}
	goleak.VerifyTestMain(m)
}

// run is one in-process run of Main with stdin fed by the test.
type run struct {
	stdin  *io.PipeWriter
	out    *agent.LineReader
	stderr *testenv.SyncBuffer
	code   chan int
	outW   *io.PipeWriter
}

func startRun(t *testing.T, args []string, start *agent.Start) *run {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	r := &run{stdin: inW, out: agent.NewLineReader(outR, 0), stderr: &testenv.SyncBuffer{}, code: make(chan int, 1), outW: outW}
	go func() {
		code := Main(args, inR, outW, r.stderr)
		outW.Close()
		inR.Close()
		r.code <- code
	}()
	if start != nil {
		start.Type, start.Protocol = agent.TypeStart, agent.Version
		r.send(t, start)
	} else {
		inW.Close()
	}
	return r
}

func (r *run) send(t *testing.T, v any) {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	_, err = r.stdin.Write(append(b, '\n'))
	require.NoError(t, err)
}

// next returns the next message on stdout.
func (r *run) next(t *testing.T) agent.Message {
	t.Helper()
	line, err := r.out.Next()
	require.NoError(t, err)
	var m agent.Message
	require.NoError(t, json.Unmarshal(line, &m), string(line))
	return m
}

// finish reads stdout to the end and returns every message and the exit code.
func (r *run) finish(t *testing.T) ([]agent.Message, int) {
	t.Helper()
	var msgs []agent.Message
	for {
		line, err := r.out.Next()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		var m agent.Message
		require.NoError(t, json.Unmarshal(line, &m), string(line))
		msgs = append(msgs, m)
	}
	r.stdin.Close()
	code, _ := testenv.Receive(t, "Main to return", r.code)
	return msgs, code
}

func lastResult(t *testing.T, msgs []agent.Message) agent.WorkerResult {
	t.Helper()
	require.NotEmpty(t, msgs)
	last := msgs[len(msgs)-1]
	require.Equal(t, agent.TypeResult, last.Type)
	require.NoError(t, last.WorkerResult.Check())
	return *last.WorkerResult
}

func logs(msgs []agent.Message) []string {
	var out []string
	for _, m := range msgs {
		if m.Type == agent.TypeLog {
			out = append(out, m.Message)
		}
	}
	return out
}

func gitRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	gitIn(t, dir, "init", "-q", "-b", "main")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "README.md"), []byte("repo\n"), 0o644))
	gitIn(t, dir, "add", "README.md")
	gitIn(t, dir, "commit", "-q", "-m", "initial")
	return dir
}

func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.invalid",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.invalid", "GIT_CONFIG_NOSYSTEM=1", "LC_ALL=C")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git %v: %s", args, out)
	return string(out)
}

func TestDefaultPlan_WritesBriefFirstLineAndCommits(t *testing.T) {
	ws := gitRepo(t)
	r := startRun(t, nil, &agent.Start{MissionID: "m-7", Attempt: 1, Epoch: 1, Title: "Greeting", Brief: "\n  Say hello\nin prose\n", Workspace: ws})
	msgs, code := r.finish(t)
	require.Equal(t, ExitOK, code)
	res := lastResult(t, msgs)
	require.Equal(t, agent.StatusCompleted, res.Status)
	require.Equal(t, []string{"m-7.md"}, res.Artifacts)
	require.Len(t, res.Evidence, 1)
	b, err := os.ReadFile(filepath.Join(ws, "m-7.md"))
	require.NoError(t, err)
	require.Equal(t, "Say hello\n", string(b))
	require.Equal(t, "m-7: Greeting\n", gitIn(t, ws, "log", "-1", "--format=%s"))
	require.Equal(t, "commit "+strings.TrimSpace(gitIn(t, ws, "rev-parse", "HEAD")), res.Evidence[0])
	require.Equal(t, "reference-agent@mcp-scheduler.invalid\n", gitIn(t, ws, "log", "-1", "--format=%ae"))
}

func TestStartFromFlags_WhenStdinIsEmpty(t *testing.T) {
	ws := gitRepo(t)
	brief := filepath.Join(t.TempDir(), "brief.md")
	require.NoError(t, os.WriteFile(brief, []byte("@write out.txt from flags\n@commit by flags\n@done flags ok"), 0o600))
	r := startRun(t, []string{"--mission", "m-8", "--workspace", ws, "--brief-file", brief}, nil)
	msgs, code := r.finish(t)
	require.Equal(t, ExitOK, code)
	require.Equal(t, "flags ok", lastResult(t, msgs).Summary)
	require.Equal(t, "by flags\n", gitIn(t, ws, "log", "-1", "--format=%s"))
}

func TestNoStartAtAll_IsAUsageError(t *testing.T) {
	r := startRun(t, nil, nil)
	msgs, code := r.finish(t)
	require.Empty(t, msgs)
	require.Equal(t, ExitUsage, code)
	require.Contains(t, r.stderr.String(), "no agent.start")
}

func TestPingAnsweredAndCancelEndsRun(t *testing.T) {
	r := startRun(t, nil, &agent.Start{MissionID: "p", Attempt: 1, Epoch: 1, Brief: "@log info ready\n@hang", Workspace: t.TempDir()})
	require.Equal(t, "ready", r.next(t).Message)
	r.send(t, agent.Ping{Type: agent.TypePing, Seq: 7})
	pong := r.next(t)
	require.Equal(t, agent.TypeHeartbeat, pong.Type)
	require.Equal(t, "pong 7", pong.Message)
	r.send(t, agent.Cancel{Type: agent.TypeCancel, Reason: "lease_lost"})
	msgs, code := r.finish(t)
	require.Equal(t, ExitOK, code)
	res := lastResult(t, msgs)
	require.Equal(t, agent.StatusCancelled, res.Status)
	require.Contains(t, res.Summary, "lease_lost")
}

func TestStdinEOF_KeepsWorking(t *testing.T) {
	ws := t.TempDir()
	r := startRun(t, nil, &agent.Start{MissionID: "e", Attempt: 1, Epoch: 1, Brief: "@sleep 200ms\n@write late.txt still here\n@done", Workspace: ws})
	r.stdin.Close() // the scheduler went away
	msgs, code := r.finish(t)
	require.Equal(t, ExitOK, code)
	require.Equal(t, agent.StatusCompleted, lastResult(t, msgs).Status)
	require.FileExists(t, filepath.Join(ws, "late.txt"))
}

func TestCheckpointResume_SkipsDoneStepsButKeepsState(t *testing.T) {
	ws := t.TempDir()
	brief := "@heartbeat 20ms\n@write a.txt one\n@checkpoint half\n@append a.txt \" two\"\n@sleep 150ms\n@done"
	r := startRun(t, nil, &agent.Start{MissionID: "c", Attempt: 2, Epoch: 3, Brief: brief, Workspace: ws,
		Checkpoint: json.RawMessage(`{"step":3,"note":"half"}`)})
	msgs, code := r.finish(t)
	require.Equal(t, ExitOK, code)
	require.Equal(t, "resuming from checkpoint: skipping steps 1-3 already done", logs(msgs)[0])
	b, err := os.ReadFile(filepath.Join(ws, "a.txt"))
	require.NoError(t, err)
	require.Equal(t, " two", string(b), "the skipped @write must not run")
	beats := 0
	for _, m := range msgs {
		if m.Type == agent.TypeHeartbeat {
			beats++
		}
	}
	require.Positive(t, beats, "@heartbeat is state: applied again on resume")
}

func TestEndings_ResultsPassTheSchema(t *testing.T) {
	cases := []struct {
		script string
		code   int
		want   agent.WorkerResult
	}{
		{"@fail test two tests fail", ExitFailed, agent.WorkerResult{Status: agent.StatusFailed, Summary: "two tests fail", Failure: &agent.Failure{Kind: "test", Summary: "two tests fail"}}},
		{"@block which API version?", ExitOK, agent.WorkerResult{Status: agent.StatusBlocked, Summary: "blocked: needs a decision: which API version?", Decision: "which API version?", Failure: &agent.Failure{Kind: agent.KindError, Summary: "needs a decision: which API version?"}}},
		{"@verdict severe breaks the build", ExitOK, agent.WorkerResult{Status: agent.StatusCompleted, Summary: "breaks the build", Verdict: agent.VerdictSevere, Findings: []agent.Finding{{Severity: "severe", Message: "breaks the build"}}}},
		{"@verdict approved", ExitOK, agent.WorkerResult{Status: agent.StatusCompleted, Verdict: agent.VerdictApproved}},
	}
	for _, c := range cases {
		r := startRun(t, nil, &agent.Start{MissionID: "x", Attempt: 1, Epoch: 1, Brief: c.script, Workspace: t.TempDir()})
		msgs, code := r.finish(t)
		require.Equal(t, c.code, code, c.script)
		require.Equal(t, c.want, lastResult(t, msgs), c.script)
	}
}

func TestBrokenScript_FailsBeforeDoingAnything(t *testing.T) {
	ws := t.TempDir()
	r := startRun(t, nil, &agent.Start{MissionID: "b", Attempt: 1, Epoch: 1, Brief: "@write a.txt x\n@frobnicate now", Workspace: ws})
	msgs, code := r.finish(t)
	require.Equal(t, ExitUsage, code)
	res := lastResult(t, msgs)
	require.Equal(t, agent.StatusFailed, res.Status)
	require.Contains(t, res.Summary, "line 2: unknown directive @frobnicate")
	require.NoFileExists(t, filepath.Join(ws, "a.txt"))
}

// A directive whose argument is wrong fails the attempt before any step runs (exit 2), naming
// the line of the mission's brief as its author wrote it, though the agent gets the brief
// the scheduler rendered around it; a --script file's lines are named as its own.
func TestBrokenArgument_FailsBeforeDoingAnything(t *testing.T) {
	ws := gitRepo(t)
	mine := "@write notes.md hello\n@progress halfway started\n@commit notes\n@done"
	rendered, err := prompts.AgentBrief(prompts.Brief{MissionID: "msn_b", Attempt: 1, Epoch: 1, Title: "four lines",
		Brief: mine, AcceptanceCriteria: []string{"notes.md exists"}, Workspace: ws, Branch: "msn_b"})
	require.NoError(t, err)
	require.Contains(t, rendered, "\n"+briefSection+"\n\n"+mine+"\n", "the agent brief puts the mission's brief under its heading")
	r := startRun(t, nil, &agent.Start{MissionID: "msn_b", Attempt: 1, Epoch: 1, Title: "four lines", Brief: rendered, Workspace: ws})
	msgs, code := r.finish(t)
	require.Equal(t, ExitUsage, code)
	require.Len(t, msgs, 1, "nothing before the result: %v", msgs)
	res := lastResult(t, msgs)
	require.Equal(t, agent.StatusFailed, res.Status)
	require.Equal(t, "brief:2", res.Failure.Location)
	require.Equal(t, "@progress", res.Failure.Tool)
	require.Contains(t, res.Failure.Summary, `brief line 2: @progress: percent "halfway" must be a number in 0..100`)
	require.NoFileExists(t, filepath.Join(ws, "notes.md"))

	script := filepath.Join(t.TempDir(), "more.txt")
	require.NoError(t, os.WriteFile(script, []byte("prose\n@sleep soon\n"), 0o600))
	r = startRun(t, []string{"--script", script}, &agent.Start{MissionID: "msn_c", Attempt: 1, Epoch: 1, Brief: "@write a.txt x", Workspace: ws})
	msgs, code = r.finish(t)
	require.Equal(t, ExitUsage, code)
	require.Equal(t, "script:2", lastResult(t, msgs).Failure.Location)
	require.NoFileExists(t, filepath.Join(ws, "a.txt"))
}

// A path outside the workspace is refused before anything runs.
func TestWriteOutsideWorkspace_Refused(t *testing.T) {
	for _, path := range []string{"../escape.txt", "/tmp/abs.txt", "a/../../b"} {
		r := startRun(t, nil, &agent.Start{MissionID: "w", Attempt: 1, Epoch: 1, Brief: "@write " + path + " x", Workspace: t.TempDir()})
		msgs, code := r.finish(t)
		require.Equal(t, ExitUsage, code, path)
		res := lastResult(t, msgs)
		require.Equal(t, "@write", res.Failure.Tool)
		require.Contains(t, res.Failure.Diagnostic, "stay inside the workspace")
		require.Equal(t, "brief:1", res.Failure.Location)
	}
}

func TestMisbehaviours_Output(t *testing.T) {
	t.Setenv("REFAGENT_TEST_VAR", "visible")
	r := startRun(t, nil, &agent.Start{MissionID: "o", Attempt: 1, Epoch: 1, Workspace: t.TempDir(),
		Brief: "@big-line 100KiB\n@garbage\n@raw \"{\\\"type\\\":\\\"task.log\\\",\\\"message\\\":\\\"raw\\\"}\\r\\n\"\n@stderr 1KiB\n@env REFAGENT_TEST_VAR\n@env REFAGENT_UNSET_VAR\n@progress 50 half\n@crash 4"})
	var lines []string
	for {
		line, err := r.out.Next()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		lines = append(lines, string(line))
	}
	r.stdin.Close()
	require.Equal(t, 4, <-r.code)
	require.Len(t, lines, 6)
	require.Greater(t, len(lines[0]), 100<<10)
	require.Equal(t, "this is not JSON {{{", lines[1])
	require.Equal(t, `{"type":"task.log","message":"raw"}`, lines[2])
	require.Contains(t, lines[3], "env REFAGENT_TEST_VAR=visible")
	require.Contains(t, lines[4], "env REFAGENT_UNSET_VAR is unset")
	require.Contains(t, lines[5], `"percent":50`)
	require.Len(t, strings.ReplaceAll(strings.Split(r.stderr.String(), "env ")[0], "\n", ""), 1024-11)
}

func TestParseScript(t *testing.T) {
	ds, err := parseScript(briefLines("prose line\n  @write dir/a.txt hello world\r\n@commit \"two\\nlines\"\n@sleep 1s\n@crash\n@ not a directive\n@checkpoint"))
	require.NoError(t, err)
	at := func(n int) place { return place{src: "brief", n: n} }
	require.Equal(t, []directive{
		{at: at(2), name: "write", args: []string{"dir/a.txt"}, text: "hello world"},
		{at: at(3), name: "commit", text: "two\nlines"},
		{at: at(4), name: "sleep", args: []string{"1s"}},
		{at: at(5), name: "crash"},
		{at: at(7), name: "checkpoint"},
	}, ds)
	for _, bad := range []string{"@nope", "@write", "@sleep", "@sleep 1s extra", "@commit \"unterminated", "@hang now",
		"@sleep soon", "@heartbeat -1s", "@progress halfway", "@progress 101", "@log loud text", "@usage 1 x 0.1",
		"@usage -1 0 0", "@verdict fine", "@crash 0", "@crash 256", "@spawn-grandchild 17", "@big-line lots",
		"@stderr -1", "@flaky 0 test t", "@rate-limited 1 soon", "@write ../escape.txt x", "@append /abs.txt x"} {
		_, err := parseScript(briefLines(bad))
		var se *scriptError
		require.ErrorAs(t, err, &se, bad)
		require.Equal(t, "brief:1", se.at.location(), bad)
	}
	for in, want := range map[string]int{"1024": 1024, "200KiB": 200 << 10, "20MiB": 20 << 20, "5MB": 5_000_000, "1.5KiB": 1536} {
		got, err := parseSize(in)
		require.NoError(t, err)
		require.Equal(t, want, got, in)
	}
	_, err = parseSize("lots")
	require.Error(t, err)
}

// The process-level behaviours: SIGTERM ends a run with a cancelled result and exit 143;
// after @ignore-sigterm only SIGKILL does.
func TestSignals_AsARealProcess(t *testing.T) {
	self, err := os.Executable()
	require.NoError(t, err)
	runProc := func(brief string) (*exec.Cmd, *agent.LineReader, io.WriteCloser) {
		cmd := exec.Command(self, Subcommand)
		cmd.Env = append(os.Environ(), "GORACE=atexit_sleep_ms=0")
		stdin, err := cmd.StdinPipe()
		require.NoError(t, err)
		stdout, err := cmd.StdoutPipe()
		require.NoError(t, err)
		require.NoError(t, cmd.Start())
		b, _ := json.Marshal(agent.Start{Type: agent.TypeStart, Protocol: agent.Version, MissionID: "s", Attempt: 1, Epoch: 1, Brief: brief, Workspace: t.TempDir()})
		_, err = stdin.Write(append(b, '\n'))
		require.NoError(t, err)
		lr := agent.NewLineReader(stdout, 0)
		line, err := lr.Next()
		require.NoError(t, err)
		require.Contains(t, string(line), "ready")
		return cmd, lr, stdin
	}
	rest := func(lr *agent.LineReader) []string {
		var out []string
		for {
			line, err := lr.Next()
			if err != nil {
				return out
			}
			out = append(out, string(line))
		}
	}

	cmd, lr, stdin := runProc("@log info ready\n@hang")
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	lines := rest(lr)
	stdin.Close()
	err = cmd.Wait()
	var exitErr *exec.ExitError
	require.ErrorAs(t, err, &exitErr)
	require.Equal(t, ExitTerminated, exitErr.ExitCode())
	require.Len(t, lines, 1)
	require.Contains(t, lines[0], `"status":"cancelled"`)

	cmd, lr, stdin = runProc("@ignore-sigterm\n@log info ready\n@hang")
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	line, err := lr.Next()
	require.NoError(t, err)
	require.Contains(t, string(line), "ignoring SIGTERM")
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	rest(lr)
	stdin.Close()
	err = cmd.Wait()
	require.ErrorAs(t, err, &exitErr)
	require.Equal(t, "signal: killed", exitErr.Error())
}

// @usage reports the attempt's usage so far as task.usage (cumulative); a malformed or
// impossible report fails the attempt.
func TestUsageDirective_ReportsTaskUsage(t *testing.T) {
	ws := gitRepo(t)
	r := startRun(t, nil, &agent.Start{MissionID: "m-9", Attempt: 1, Epoch: 1, Title: "spend",
		Brief: "@usage 1000 100 0.5\n@usage 2000 150 0.75\n@done ok", Workspace: ws})
	msgs, code := r.finish(t)
	require.Equal(t, ExitOK, code)
	var got []agent.Usage
	for _, m := range msgs {
		if u, ok := m.ReportedUsage(); ok {
			got = append(got, u)
		}
	}
	require.Equal(t, []agent.Usage{{InputTokens: 1000, OutputTokens: 100, CostUSD: 0.5},
		{InputTokens: 2000, OutputTokens: 150, CostUSD: 0.75}}, got)

	for _, brief := range []string{"@usage 10 x 0.1\n@done ok", "@usage -1 0 0\n@done ok"} {
		r := startRun(t, nil, &agent.Start{MissionID: "m-10", Attempt: 1, Epoch: 1, Title: "bad", Brief: brief, Workspace: gitRepo(t)})
		_, code := r.finish(t)
		require.NotEqual(t, ExitOK, code, brief)
	}
}

// @symlink makes a link as `ln -s` does, to any target, and @commit stages it like a written
// file; a link path outside the workspace or a missing target is refused before anything runs.
func TestSymlink_MakesTheLinkAndCommitStagesIt(t *testing.T) {
	ws := gitRepo(t)
	target := filepath.Join(t.TempDir(), "node_modules")
	r := startRun(t, nil, &agent.Start{MissionID: "s", Attempt: 1, Epoch: 1, Workspace: ws,
		Brief: "@symlink node_modules " + target + "\n@symlink lib/readme \"../README.md\"\n@commit links\n@done"})
	msgs, code := r.finish(t)
	require.Equal(t, ExitOK, code)
	require.Equal(t, agent.StatusCompleted, lastResult(t, msgs).Status)
	got, err := os.Readlink(filepath.Join(ws, "node_modules"))
	require.NoError(t, err)
	require.Equal(t, target, got)
	require.Equal(t, "120000 blob", strings.Join(strings.Fields(gitIn(t, ws, "ls-tree", "HEAD", "node_modules"))[:2], " "))
	require.Equal(t, "../README.md", gitIn(t, ws, "cat-file", "blob", "HEAD:lib/readme"))

	for _, brief := range []string{"@symlink ../out /x", "@symlink only-a-path"} {
		r := startRun(t, nil, &agent.Start{MissionID: "s", Attempt: 1, Epoch: 1, Brief: brief, Workspace: t.TempDir()})
		msgs, code := r.finish(t)
		require.Equal(t, ExitUsage, code, brief)
		require.Equal(t, "@symlink", lastResult(t, msgs).Failure.Tool, brief)
	}
}

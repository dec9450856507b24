package adapters_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
	"github.com/mcp-scheduler/mcp-scheduler/e2e/testenv"
)

// worktree makes a git repository with one commit and a worktree of it on branch mission-1,
// as the scheduler's workspaces are, and returns the worktree's path.
func worktree(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	repo := filepath.Join(root, "repo")
	wt := filepath.Join(root, "wt")
	require.NoError(t, os.MkdirAll(repo, 0o700))
	git(t, "", "init", "-q", "-b", "main", repo)
	require.NoError(t, os.WriteFile(filepath.Join(repo, "README.md"), []byte("# test repo\n"), 0o600))
	git(t, repo, "add", "README.md")
	git(t, repo, "commit", "-q", "-m", "init")
	git(t, repo, "worktree", "add", "-q", "-b", "mission-1", "--", wt)
	exclude := filepath.Join(repo, ".git", "info", "exclude")
	f, err := os.OpenFile(exclude, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	require.NoError(t, err)
	_, err = f.WriteString("/.mcp-scheduler/\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	return wt
}

func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	if dir != "" {
		args = append([]string{"-C", dir}, args...)
	}
	cmd := exec.Command(testenv.LookPath(t, "git"), args...)
	cmd.Env = append(os.Environ(), testenv.GitEnv()...)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git %v: %s", args, out)
}

// writeBrief writes the brief where the scheduler puts it and returns its path.
func writeBrief(t *testing.T, wt, text string) string {
	t.Helper()
	p := filepath.Join(wt, ".mcp-scheduler", "brief.md")
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o700))
	require.NoError(t, os.WriteFile(p, []byte(text), 0o600))
	return p
}

// run is one finished agent process, decoded.
type run struct {
	inv     agent.Invocation
	lines   [][]byte // stdout lines, as fed to the decoder
	msgs    []agent.Message
	errs    []error
	result  agent.WorkerResult
	exit    agent.ExitStatus
	stderr  string
	elapsed time.Duration
}

// launch does what the runner will: writes the invocation's files, starts argv in its own
// process group with stdin /dev/null and exactly inv.Env, feeds stdout lines to the decoder,
// and ends it with the exit status. onLine (may be nil) sees each decoded line and may return
// a reason to stop the agent with SIGINT; that reason becomes ExitStatus.Reason.
func launch(t *testing.T, a agent.Adapter, inv agent.Invocation, onLine func(raw []byte) (stop string)) run {
	t.Helper()
	for path, body := range inv.Files {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o700))
		require.NoError(t, os.WriteFile(path, body, 0o600))
	}
	cmd := exec.Command(inv.Argv[0], inv.Argv[1:]...)
	cmd.Env = envList(inv.Env)
	cmd.Dir = inv.Dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	start := time.Now()
	require.NoError(t, cmd.Start())
	pgid := cmd.Process.Pid
	var once sync.Once
	waited := make(chan struct{})
	t.Cleanup(func() {
		_ = syscall.Kill(-pgid, syscall.SIGKILL) // the group may be gone already
		<-waited
	})
	// A run takes well under a second (agent-clis.md); one that hangs is ended at the test's
	// deadline, so that its output and the failure are reported.
	watchdog := time.AfterFunc(time.Until(testenv.WaitDeadline(t)), func() { _ = syscall.Kill(-pgid, syscall.SIGKILL) })
	defer watchdog.Stop()

	dec := a.NewDecoder()
	var out run
	out.inv = inv
	reason := ""
	rd := bufio.NewReaderSize(stdout, 1<<16)
	for {
		line, err := rd.ReadBytes('\n')
		line = bytes.TrimRight(line, "\r\n")
		if len(bytes.TrimSpace(line)) > 0 {
			out.lines = append(out.lines, append([]byte(nil), line...))
			msgs, derr := dec.Line(line)
			out.msgs = append(out.msgs, msgs...)
			if derr != nil {
				out.errs = append(out.errs, derr)
			}
			if onLine != nil {
				if r := onLine(line); r != "" && reason == "" {
					reason = r
					once.Do(func() { _ = syscall.Kill(-pgid, syscall.SIGINT) })
				}
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				t.Errorf("read stdout: %v", err)
			}
			break
		}
	}
	werr := cmd.Wait()
	close(waited)
	out.elapsed = time.Since(start)
	out.stderr = stderr.String()
	out.exit = exitStatus(cmd.ProcessState, werr)
	out.exit.Reason = reason
	out.result = dec.End(out.exit)
	t.Logf("%s: %s in %v; result %+v", filepath.Base(inv.Argv[0]), describe(out.exit), out.elapsed.Round(time.Millisecond), out.result)
	return out
}

func exitStatus(ps *os.ProcessState, werr error) agent.ExitStatus {
	if ps == nil {
		return agent.ExitStatus{}
	}
	st := agent.ExitStatus{Known: true, Code: ps.ExitCode()}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		st.Code = -1
		st.Signal = signalName(ws.Signal())
	}
	_ = werr // the status above says everything Wait's error would
	return st
}

func signalName(s syscall.Signal) string {
	switch s {
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGKILL:
		return "SIGKILL"
	}
	return s.String()
}

func describe(e agent.ExitStatus) string {
	if e.Signal != "" {
		return "killed by " + e.Signal
	}
	return fmt.Sprintf("exit %d", e.Code)
}

// envList renders an environment map as sorted KEY=value entries.
func envList(env map[string]string) []string {
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// types lists the message types of msgs, in order.
func types(msgs []agent.Message) []string {
	out := make([]string, 0, len(msgs))
	for _, m := range msgs {
		out = append(out, m.Type)
	}
	return out
}

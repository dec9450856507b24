package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/e2e/testenv"
)

// cliIn runs one command line in-process from dir (not the sandbox's repository).
func (s *sandbox) cliIn(dir string, args ...string) (string, string, int) {
	s.t.Helper()
	wd, err := os.Getwd()
	require.NoError(s.t, err)
	s.t.Chdir(wd) // a no-op that panics in a parallel test: the in-process CLI changes the process's directory
	require.NoError(s.t, os.Chdir(dir))
	defer func() { require.NoError(s.t, os.Chdir(wd)) }()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, streams{in: strings.NewReader(""), out: &out, err: &errb}, s.getenv)
	return out.String(), errb.String(), code
}

// serve --repo names what is wrong with the path in plain words, before anything is opened.
func TestServe_RepoFlagSaysWhatIsWrong(t *testing.T) {
	s := newSandbox(t)
	file := filepath.Join(s.home, "notes.txt")
	require.NoError(t, os.WriteFile(file, []byte("x"), 0o600))
	plain := filepath.Join(s.home, "plain")
	require.NoError(t, os.MkdirAll(plain, 0o755))
	for dir, want := range map[string]string{
		filepath.Join(s.home, "no", "such"): "there is no such directory",
		file:                                "is a file, not a directory",
		plain:                               "is not inside a git repository",
	} {
		_, errs, code := s.cli("serve", "--repo", dir)
		require.Equal(t, 2, code, errs)
		require.Equal(t, "mcp-scheduler: --repo "+dir+": "+want+"", strings.SplitN(strings.TrimSpace(errs), " (", 2)[0])
		_, err := os.Stat(s.dataDir)
		require.ErrorIs(t, err, os.ErrNotExist, "nothing opened")
	}
}

// serve started outside any repository, with no --repo and no [[repositories]], warns that
// no mission can be created and says how to give it one; inside a checkout it does not.
func TestServe_WarnsWhenNoRepositoryIsKnown(t *testing.T) {
	s := newSandbox(t)
	plain := filepath.Join(s.home, "plain")
	require.NoError(t, os.MkdirAll(plain, 0o755))
	_, errs, code := s.cliIn(plain, "serve")
	require.Equal(t, 0, code, errs)
	require.Contains(t, errs, "WRN no repository: started outside any git repository with no --repo and no [[repositories]]")
	require.Contains(t, errs, "pass --repo DIR, or add [[repositories]] path = \"DIR\"")
	_, errs, code = s.cliIn(plain, "serve", "--repo", s.repo)
	require.Equal(t, 0, code, errs)
	require.NotContains(t, errs, "no repository")
	_, errs, code = s.cli("serve")
	require.Equal(t, 0, code, errs)
	require.NotContains(t, errs, "no repository")
}

// A second daemon on a data dir says which process leads (its pid, since when) and that it
// stands by; when the leader stops, it takes over.
func TestDaemon_SecondSaysWhichProcessLeads(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	first := s.start(nil, "daemon")
	testenv.WaitFor(t, "the first daemon leads", func() bool { return strings.Contains(first.stderrText(), "leading the scheduler loop") })
	second := s.start(nil, "daemon")
	want := "another process leads the scheduler loop on this data dir: pid " + strconv.Itoa(first.cmd.Process.Pid) + " on host "
	testenv.WaitFor(t, "the second daemon names the leader", func() bool { return strings.Contains(second.stderrText(), want) })
	require.Contains(t, second.stderrText(), ", leading since ")
	require.Contains(t, second.stderrText(), "this daemon stands by and takes over when it stops")
	require.NotContains(t, first.stderrText(), "another process leads")

	require.NoError(t, first.cmd.Process.Signal(os.Interrupt))
	require.Equal(t, 0, first.wait())
	testenv.WaitFor(t, "the second daemon takes over", func() bool { return strings.Contains(second.stderrText(), "leading the scheduler loop") })
	require.NoError(t, second.cmd.Process.Signal(os.Interrupt))
	require.Equal(t, 0, second.wait())
}

// A daemon started after the leader was SIGKILLed (its lease still running) does not say
// another process leads: it says the previous leader, by its pid, is gone — no process has
// that pid on this host — and that it takes over at once (the dead leader's host lock was
// released), which it does.
func TestDaemon_AfterTheLeaderWasKilledSaysItIsGone(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	writeSandboxConfig(t, s, "[scheduler]\nleader_lease = \"10m\"\n") // the killed leader's lease outlives the test
	first := s.start(nil, "daemon")
	testenv.WaitFor(t, "the first daemon leads", func() bool { return strings.Contains(first.stderrText(), "leading the scheduler loop") })
	pid := first.cmd.Process.Pid
	first.kill() // SIGKILL, and reaped: the pid names no process now
	require.False(t, processAlive(pid))

	second := s.start(nil, "daemon")
	want := "the previous leader of the scheduler loop on this data dir is gone: pid " + strconv.Itoa(pid) + " on host "
	testenv.WaitFor(t, "the second daemon says the leader is gone", func() bool { return strings.Contains(second.stderrText(), want) })
	require.Contains(t, second.stderrText(), "but no process has pid "+strconv.Itoa(pid)+" on this host now; this daemon takes over at once")
	require.NotContains(t, second.stderrText(), "another process leads")
	testenv.WaitFor(t, "the second daemon takes over", func() bool { return strings.Contains(second.stderrText(), "leading the scheduler loop") })
	require.NoError(t, second.cmd.Process.Signal(os.Interrupt))
	require.Equal(t, 0, second.wait())
}

// ownerProcess reads a leader owner's host and pid; processAlive tells a running process
// from a reaped one.
func TestOwnerProcessAndProcessAlive(t *testing.T) {
	t.Parallel()
	host, pid := ownerProcess("build-1:4242:123456")
	require.Equal(t, "build-1", host)
	require.Equal(t, 4242, pid)
	host, pid = ownerProcess("fe80::1:77:9")
	require.Equal(t, "fe80::1", host)
	require.Equal(t, 77, pid)
	for _, bad := range []string{"", "node-a", "h:x:1", "h:-3:1"} {
		_, pid := ownerProcess(bad)
		require.Zero(t, pid, bad)
	}
	require.True(t, processAlive(os.Getpid()))
	cmd := exec.Command("sleep", "60")
	require.NoError(t, cmd.Start())
	require.True(t, processAlive(cmd.Process.Pid))
	require.NoError(t, cmd.Process.Kill())
	_ = cmd.Wait()
	require.False(t, processAlive(cmd.Process.Pid))
}

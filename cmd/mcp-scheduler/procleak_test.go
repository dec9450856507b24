package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/mcp-scheduler/mcp-scheduler/e2e/testenv"
)

// requireNoProcessesLeft waits until no process but this test's own works inside dir or
// carries dir in its environment (a daemon, a shim, an agent started with the sandbox's
// HOME or data dir): those still alive at the test binary's deadline (less a margin) fail
// the test, named, and are killed, so that one leaking test does not load the machine for
// the next ones.
func requireNoProcessesLeft(t *testing.T, dir string) {
	t.Helper()
	var left []leftover
	defer func() {
		for _, p := range left {
			_ = syscall.Kill(p.pid, syscall.SIGKILL)
		}
	}()
	testenv.WaitForState(t, "the test's processes to end", func() bool {
		left = processesUsing(dir, true)
		return len(left) == 0
	}, func() string {
		return "processes outlived the test (cancel what it started and wait for it to end): " + strings.Join(describe(left), "; ")
	})
}

// leftover is a live process found by processesUsing.
type leftover struct {
	pid  int
	cwd  string
	args string
}

// waitAgentsGone waits until no process works inside dir (a data dir: its agents work in
// worktrees under it).
func waitAgentsGone(t *testing.T, dir string) {
	t.Helper()
	var left []leftover
	testenv.WaitForState(t, "no agent working in "+dir, func() bool {
		left = processesUsing(dir, false)
		return len(left) == 0
	}, func() string { return "agents still work there: " + strings.Join(describe(left), "; ") })
}

// processesUsing lists the live processes, other than this one, whose working directory is
// inside dir or (withEnv) whose environment names a path inside it (read from /proc).
func processesUsing(dir string, withEnv bool) []leftover {
	entries, _ := os.ReadDir("/proc")
	var out []leftover
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		if p, ok := usesDir(pid, dir, withEnv); ok {
			out = append(out, p)
		}
	}
	return out
}

// usesDir reports whether process pid works in dir or (withEnv) names it in its
// environment. A zombie (whose cwd and environment are gone) does not.
func usesDir(pid int, dir string, withEnv bool) (leftover, bool) {
	base := filepath.Join("/proc", strconv.Itoa(pid))
	cwd, err := os.Readlink(filepath.Join(base, "cwd"))
	if err != nil {
		return leftover{}, false
	}
	inside := cwd == dir || bytes.HasPrefix([]byte(cwd), []byte(dir+string(filepath.Separator)))
	if !inside && withEnv {
		env, _ := os.ReadFile(filepath.Join(base, "environ"))
		inside = bytes.Contains(env, []byte("="+dir+string(filepath.Separator))) || bytes.Contains(env, []byte("="+dir+"\x00"))
	}
	if !inside {
		return leftover{}, false
	}
	cmdline, _ := os.ReadFile(filepath.Join(base, "cmdline"))
	return leftover{pid: pid, cwd: cwd, args: string(bytes.ReplaceAll(bytes.TrimRight(cmdline, "\x00"), []byte{0}, []byte{' '}))}, true
}

// describe formats leftovers for a failure message.
func describe(ps []leftover) []string {
	out := make([]string, 0, len(ps))
	for _, p := range ps {
		out = append(out, strconv.Itoa(p.pid)+" "+p.args+" (in "+p.cwd+")")
	}
	return out
}

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// leftoverWait is how long requireNoProcessesLeft waits for a test's processes to end on
// their own (an orphaned agent finishing a short brief, a shim recording its agent's exit)
// before it calls them leaked: generous, since the machine may be loaded.
const leftoverWait = time.Minute

// requireNoProcessesLeft waits until no process but this test's own works inside dir or
// carries dir in its environment (a daemon, a shim, an agent started with the sandbox's
// HOME or data dir), and fails the test naming those still alive after leftoverWait. It
// then kills them, so that one leaking test does not load the machine for the next ones.
func requireNoProcessesLeft(t *testing.T, dir string) {
	t.Helper()
	deadline := time.Now().Add(leftoverWait)
	for {
		left := processesUsing(dir, true)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("processes outlived the test (cancel what it started and wait for it to end): %v", describe(left))
			for _, p := range left {
				_ = syscall.Kill(p.pid, syscall.SIGKILL)
			}
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// leftover is a live process found by processesUsing.
type leftover struct {
	pid  int
	cwd  string
	args string
}

// waitAgentsGone waits until no process works inside dir (a data dir: its agents work in
// worktrees under it), failing the test after leftoverWait.
func waitAgentsGone(t *testing.T, dir string) {
	t.Helper()
	deadline := time.Now().Add(leftoverWait)
	for left := processesUsing(dir, false); len(left) > 0; left = processesUsing(dir, false) {
		if time.Now().After(deadline) {
			t.Fatalf("agents still work in %s: %v", dir, describe(left))
		}
		time.Sleep(100 * time.Millisecond)
	}
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

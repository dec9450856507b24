package main

import (
	"context"
	"encoding/json"
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/storage/teststore"
)

// bareRepo makes a bare repository at dir (main as its HEAD), with the sandbox's main pushed
// to it unless empty.
func bareRepo(t *testing.T, s *sandbox, dir string, empty bool) {
	t.Helper()
	out, err := exec.Command("git", "init", "-q", "--bare", "-b", "main", dir).CombinedOutput()
	require.NoError(t, err, "%s", out)
	if !empty {
		gitOut(t, s, "push", "-q", dir, "main:main")
	}
}

// closedURL is an http URL on a loopback port nothing listens on, with a password in it.
func closedURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return "http://doctor:s3cret@" + addr + "/gone.git"
}

// doctorChecks runs doctor --json and returns its checks by name and its exit code.
func doctorChecks(t *testing.T, s *sandbox) (map[string]check, int) {
	t.Helper()
	out, errs, code := s.cli("doctor", "--json")
	var checks []check
	require.NoError(t, json.Unmarshal([]byte(out), &checks), "%s\n%s", out, errs)
	byName := map[string]check{}
	for _, c := range checks {
		byName[c.Name] = c
	}
	return byName, code
}

// doctor asks every remote repository for its HEAD: reachable ones (over smart HTTP, a path
// and a file:// URL, the last one empty) with their default branch and commit; one on a closed
// port and one at a path with no repository fail the doctor with git's message and what to
// check, the password in a URL hidden. Nothing prompts, and each look is bounded.
func TestDoctor_ChecksEveryRemoteRepository(t *testing.T) {
	s := newSandbox(t)
	web := serveBareRemote(t, s)
	plain, empty := filepath.Join(s.home, "plain.git"), filepath.Join(s.home, "empty.git")
	bareRepo(t, s, plain, false)
	bareRepo(t, s, empty, true)
	head := strings.TrimSpace(gitOut(t, s, "rev-parse", "main"))
	repos := web.config(web.url) +
		"[[repositories]]\nremote = \"" + plain + "\"\n" + // a plain path, as the README's cluster section has it
		"[[repositories]]\nremote = \"file://" + empty + "\"\n" +
		"[[repositories]]\nname = \"closed\"\nremote = \"" + closedURL(t) + "\"\n" +
		"[[repositories]]\nremote = \"file://" + filepath.Join(s.home, "nowhere.git") + "\"\n"
	writeSandboxConfig(t, s, repos)

	checks, code := doctorChecks(t, s)
	require.Equal(t, 1, code, "an unreachable remote fails the doctor: %+v", checks)
	for name, want := range map[string]string{"remote shop": web.url, "remote plain": plain} {
		c := checks[name]
		require.True(t, c.OK, "%s: %+v", name, c)
		require.Equal(t, want+": reachable, default branch main at "+head[:12], c.Detail)
	}
	require.True(t, checks["remote empty"].OK, "%+v", checks["remote empty"])
	require.Contains(t, checks["remote empty"].Detail, "reachable, empty (no commits yet)")
	for _, name := range []string{"remote closed", "remote nowhere"} {
		c := checks[name]
		require.False(t, c.OK, "%s: %+v", name, c)
		require.Contains(t, c.Detail, "cannot be reached: talking to the remote failed: git ls-remote", name)
		require.Contains(t, c.Detail, "check the URL (remote = in [[repositories]])", name)
	}
	require.Contains(t, checks["remote closed"].Detail, "Failed to connect")
	require.Contains(t, checks["remote closed"].Detail, "http://doctor:xxxxx@127.0.0.1:")
	require.NotContains(t, checks["remote closed"].Detail, "s3cret", "the password in the URL is not shown")
	require.Contains(t, checks["remote nowhere"].Detail, "does not appear to be a git repository")
}

// status and doctor list the live landing locks: the target, the node landing there and when
// its lock expires; an expired lock is not listed.
func TestDoctorAndStatus_ListLiveLandingLocks(t *testing.T) {
	s := newSandbox(t)
	_, _, code := s.cli("status")
	require.Equal(t, 0, code)
	checks, code := doctorChecks(t, s)
	require.Equal(t, 0, code)
	_, listed := checks["landing locks"]
	require.False(t, listed, "on a single node with no lock held, doctor says nothing of landing locks")

	ctx := context.Background()
	st := teststore.OpenAt(t, filepath.Join(s.dataDir, "mcp-scheduler.db"))
	eng := engine.New(st, engine.Options{})
	held, err := eng.LandingLockTake(ctx, engine.LandingTarget("shop", "main"), "n2", 10*time.Minute)
	require.NoError(t, err)
	require.True(t, held)
	gone := engine.New(st, engine.Options{Clock: engine.NewFakeClock(time.Now().Add(-time.Hour))})
	held, err = gone.LandingLockTake(ctx, engine.LandingTarget("shop", "release"), "n3", time.Minute)
	require.NoError(t, err)
	require.True(t, held)

	checks, code = doctorChecks(t, s)
	require.Equal(t, 0, code)
	c := checks["landing locks"]
	require.True(t, c.OK, "%+v", c)
	require.Regexp(t, `^shop:main held by n2 \(expires in (\d+m)?\d+s\)$`, c.Detail)

	out, errs, code := s.cli("status")
	require.Equal(t, 0, code, errs)
	require.Regexp(t, `(?m)^landing     shop:main held by n2 \(expires in (\d+m)?\d+s\)$`, out)
	require.NotContains(t, out, "release", "an expired lock is not listed")
}

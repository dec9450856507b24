package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/e2e/testenv"
)

// Under `go run` the demo's watch hint is a `go run` line that works from any directory after
// the demo has ended (go run's own binary is deleted by then, or sits in the build cache), not
// that binary's path: run as a person runs it, with --keep, then the printed line from another
// directory — twice, since go run runs its temporary build the first time and the cached one
// after.
func TestDemo_GoRunPrintsAWatchCommandThatStillWorks(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	root := testenv.RepoRoot()
	env := append(s.env, "TMPDIR="+s.home, "GOFLAGS=-mod=readonly", "GOTOOLCHAIN=local")
	for _, name := range []string{"GOCACHE", "GOMODCACHE", "GOPATH"} {
		out, err := exec.Command("go", "env", name).Output()
		require.NoError(t, err)
		env = append(env, name+"="+strings.TrimSpace(string(out))) // the sandbox's HOME has no build cache
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*demoTimeoutFor(0)+5*time.Minute)
	defer cancel()
	for run := 1; run <= 2; run++ {
		demo := exec.CommandContext(ctx, "go", "run", "./cmd/mcp-scheduler", "demo", "--keep")
		demo.Env, demo.Dir = env, root
		out, err := demo.CombinedOutput()
		require.NoError(t, err, "run %d: %s", run, out)
		m := regexp.MustCompile(`Watch it live from another terminal: (.+) --data-dir (\S+) watch\n`).FindSubmatch(out)
		require.NotNil(t, m, "run %d: %s", run, out)
		require.Equal(t, "go -C "+root+" run ./cmd/mcp-scheduler", string(m[1]), "run %d: not the binary go run ran", run)
		voyage := regexp.MustCompile(`voyage (vyg_\w+)`).FindSubmatch(out)
		require.NotNil(t, voyage, "%s", out)

		words := append(strings.Fields(string(m[1])), "--data-dir", string(m[2]), "watch", "--once")
		w := exec.CommandContext(ctx, words[0], words[1:]...)
		w.Env, w.Dir = env, s.home
		watched, err := w.CombinedOutput()
		require.NoError(t, err, "%s", watched)
		require.Contains(t, string(watched), string(voyage[1]))
	}
}

// goRunBuild knows go run's binary by its place (…/go-build*/b001/exe/NAME under the
// temporary directory or GOTMPDIR, or GOCACHE/xx/<hash>-d/NAME); a test binary or an
// installed one is not it. goModModule reads a go.mod's module line.
func TestSelfCommand_GoRunBuild(t *testing.T) {
	t.Parallel()
	tmp := filepath.Join(string(filepath.Separator), "tmp")
	require.True(t, goRunBuild(filepath.Join(tmp, "go-build123", "b001", "exe", "mcp-scheduler"), tmp))
	require.True(t, goRunBuild("/scratch/go-build9/b001/exe/mcp-scheduler", tmp, "/scratch"))
	require.False(t, goRunBuild(filepath.Join(tmp, "go-build123", "b001", "mcp-scheduler.test"), tmp))
	require.False(t, goRunBuild("/usr/local/bin/mcp-scheduler", tmp))
	require.False(t, goRunBuild(filepath.Join(tmp, "mcp-scheduler-bin-1", "exe", "mcp-scheduler"), tmp))
	cached := "/root/.cache/go-build/25/25fa455ced2d63a6936265eb3ed258bdf6dad67a324ae96e36889f95935a3a81-d/mcp-scheduler"
	require.True(t, goRunBuild(cached, tmp), "go run's binary from the build cache (its second run on)")
	require.False(t, goRunBuild("/root/.cache/go-build/25/25fa455ced2d63a6936265eb3ed258bdf6dad67a324ae96e36889f95935a3a81-a/mcp-scheduler", tmp))
	gomod, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "go.mod"))
	require.NoError(t, err)
	require.Equal(t, modulePath, goModModule(string(gomod)))
}

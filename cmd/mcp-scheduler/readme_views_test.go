package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/e2e/testenv"
)

// The README tells a new user what issue 16 promised them: that the first build compiles
// for minutes, how to watch the demo fill in (demo --pace with --http, and watch), and
// where the dashboard is; and every command line it shows for that parses with the flags the
// binary really has (demo --help names --pace, --http and --keep).
func TestReadme_SaysHowToWatchTheDemo(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "README.md"))
	require.NoError(t, err)
	readme := strings.Join(strings.Fields(string(raw)), " ") // its lines wrap anywhere
	// issue 28: the first command builds with -v, so that a cold build on a busy machine
	// (over 20 minutes at load 45) lists what it compiles instead of a silent terminal.
	require.Contains(t, readme, "go build -v -o bin/mcp-scheduler ./cmd/mcp-scheduler && bin/mcp-scheduler demo")
	require.Regexp(t, "The first build compiles .* takes minutes on a small machine", readme)
	require.Contains(t, readme, "`-v` lists each package as it compiles")
	require.Contains(t, readme, "`demo --pace 2s`")
	require.Contains(t, readme, "bin/mcp-scheduler demo --pace 2s --http 127.0.0.1:8765")
	require.Contains(t, readme, "open the `Dashboard:` URL it prints")
	require.Contains(t, readme, "`mcp-scheduler serve --http 127.0.0.1:8765` also serves a live web dashboard")
	s := newSandbox(t)
	help, errs, code := s.cli("demo", "--help")
	require.Equal(t, 0, code, errs)
	for _, flag := range []string{"--pace duration", "--http string", "--keep"} {
		require.Contains(t, help, flag)
	}
}

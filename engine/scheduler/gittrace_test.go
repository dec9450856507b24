package scheduler_test

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// gitTrace counts the git processes a benchmark starts, from git's own trace2 event stream
// (GIT_TRACE2_EVENT names a directory: every git process writes one file there). Set it up
// before the worktree manager is made (its git runner copies the environment once).
type gitTrace struct {
	dir  string
	seen map[string]bool // files written before mark
}

// traceGit points GIT_TRACE2_EVENT of this process (and so of every git it starts) at a new
// directory for the rest of the benchmark.
func traceGit(b *testing.B) *gitTrace {
	dir := b.TempDir()
	b.Setenv("GIT_TRACE2_EVENT", dir)
	return &gitTrace{dir: dir}
}

// mark forgets the processes so far (the fixture's), so that count sees only what follows.
func (g *gitTrace) mark(b *testing.B) {
	ents, err := os.ReadDir(g.dir)
	require.NoError(b, err)
	g.seen = map[string]bool{}
	for _, e := range ents {
		g.seen[e.Name()] = true
	}
}

// gitCount is what the trace says about the git processes started since mark: how many of
// each command (top-level processes only: the children git starts itself, such as
// `worktree add`'s `reset`, are part of their parent) and their summed wall time.
type gitCount struct {
	byCommand map[string]int
	procs     int
	wall      time.Duration
}

// count reads the trace files written since mark.
func (g *gitTrace) count(b *testing.B) gitCount {
	ents, err := os.ReadDir(g.dir)
	require.NoError(b, err)
	c := gitCount{byCommand: map[string]int{}}
	for _, e := range ents {
		if g.seen[e.Name()] {
			continue
		}
		cmd, wall, top, err := readTrace(filepath.Join(g.dir, e.Name()))
		require.NoError(b, err)
		if !top {
			continue
		}
		c.byCommand[cmd]++
		c.procs++
		c.wall += wall
	}
	return c
}

// readTrace reads one process's trace2 events: its command (the first word after git's own
// options; "merge --ff-only" and "worktree <verb>" keep their second word), its wall time
// (the exit event's t_abs) and whether it is a top-level process (its sid has no parent).
func readTrace(path string) (cmd string, wall time.Duration, top bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		return "", 0, false, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		var ev struct {
			Event string   `json:"event"`
			SID   string   `json:"sid"`
			Argv  []string `json:"argv"`
			TAbs  float64  `json:"t_abs"`
		}
		if json.Unmarshal(sc.Bytes(), &ev) != nil {
			continue
		}
		switch ev.Event {
		case "start":
			cmd, top = commandOf(ev.Argv), !strings.Contains(ev.SID, "/")
		case "exit":
			wall = time.Duration(ev.TAbs * float64(time.Second))
		}
	}
	return cmd, wall, top, sc.Err()
}

// commandOf names a git command line by its subcommand, skipping -C and -c options.
func commandOf(argv []string) string {
	i := 1
	for i < len(argv) && (argv[i] == "-C" || argv[i] == "-c") {
		i += 2
	}
	for i < len(argv) && strings.HasPrefix(argv[i], "--") { // --no-optional-locks
		i++
	}
	if i >= len(argv) {
		return "?"
	}
	switch argv[i] {
	case "merge", "worktree":
		if i+1 < len(argv) {
			return argv[i] + " " + argv[i+1]
		}
	}
	return argv[i]
}

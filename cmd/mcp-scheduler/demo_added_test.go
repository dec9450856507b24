package main

import (
	"bufio"
	"context"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/e2e/testenv"
)

// A mission a person adds to the demo's voyage while it runs (`go --voyage`, in the demo's
// repository and data dir, as the printed watch command names it) is printed by its title,
// not by its kind, and the end counts it apart from the missions the scheduler added.
func TestDemo_CountsAMissionAddedFromOutside(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	ctx, cancel := context.WithTimeout(context.Background(), demoTimeoutFor(time.Second)+time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, "demo", "--pace", "1s")
	cmd.Env, cmd.Dir = s.env, s.repo
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var errb testenv.SyncBuffer
	cmd.Stderr = &errb
	require.NoError(t, cmd.Start())
	sc := bufio.NewScanner(stdout)
	var out []string
	for sc.Scan() {
		out = append(out, sc.Text())
		if strings.HasPrefix(sc.Text(), "Watch it live from another terminal: ") {
			break
		}
	}
	text := strings.Join(out, "\n")
	start := regexp.MustCompile(`voyage (vyg_\w+), 6 missions dispatched, repository (\S+)`).FindStringSubmatch(text)
	require.NotNil(t, start, "%s\nstderr:\n%s", text, errb.String())
	g := exec.CommandContext(ctx, binary, "--data-dir", printedWatch(t, text)[2], "go", "Added by a person", "--voyage", start[1],
		"--brief", "@done added")
	g.Env, g.Dir = s.env, start[2]
	added, err := g.CombinedOutput()
	require.NoError(t, err, "%s", added)
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	require.NoError(t, cmd.Wait(), "%s\nstderr:\n%s", strings.Join(out, "\n"), errb.String())
	text = strings.Join(out, "\n")
	require.Contains(t, text, "Voyage completed: 6 missions dispatched + 1 the scheduler added + 1 added from outside the demo, ")
	require.Regexp(t, `(?m)^\s+[\d.]+s  Added by a person +(started|completed)`, text, "named by its title")
	require.NotRegexp(t, `(?m)^\s+[\d.]+s  work `, text, "not by its kind")
}

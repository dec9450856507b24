package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// demo --pace makes each demo agent step wait: every completed attempt of a dispatched
// mission took at least its paced steps times the pace, and the glossary's review at least
// one pace (its reviewer waits, so the glossary waits to land where a person sees it) (a lower bound derived from the
// option; nothing bounds how slow a loaded machine may be). A pace out of range is a usage
// mistake that starts nothing.
func TestDemo_PaceIsHonoured(t *testing.T) {
	s := newSandbox(t)
	_, errs, code := s.cli("demo", "--pace", "-1s")
	require.Equal(t, 2, code, errs)
	require.Contains(t, errs, "--pace")
	_, errs, code = s.cli("demo", "--pace", "2h")
	require.Equal(t, 2, code, errs)

	const pace = 700 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), demoTimeoutFor(pace)+time.Minute)
	defer cancel()
	var out, errb bytes.Buffer
	cmd := exec.CommandContext(ctx, binary, "demo", "--keep", "--pace", pace.String())
	cmd.Env, cmd.Dir, cmd.Stdout, cmd.Stderr = s.env, s.repo, &out, &errb
	require.NoError(t, cmd.Run(), "stdout:\n%s\nstderr:\n%s", out.String(), errb.String())
	_, kept, ok := strings.Cut(out.String(), "\nKept: repository ")
	require.True(t, ok, out.String())
	_, dataDir, ok := strings.Cut(strings.TrimSpace(kept), ", data dir ")
	require.True(t, ok, kept)
	t.Cleanup(func() { _ = os.RemoveAll(filepath.Dir(dataDir)) })

	checked, reviewed := 0, 0
	for _, m := range cliJSON[[]domain.Mission](s, "missions", "--data-dir", dataDir) {
		if m.Kind == domain.KindReview {
			// the scheduler's review: its brief is not the demo's, but its reviewer is
			// paced by the reviewed mission's brief (pacedReview), one step
			requireAttemptsTook(t, cliJSON[engine.MissionDetail](s, "missions", "show", m.ID, "--data-dir", dataDir), pace)
			reviewed++
			continue
		}
		steps := strings.Count(m.Brief, "@sleep "+pace.String())
		require.Positive(t, steps, "%s's brief is paced:\n%s", m.Key, m.Brief)
		d := cliJSON[engine.MissionDetail](s, "missions", "show", m.ID, "--data-dir", dataDir)
		for _, a := range d.Attempts {
			if a.Outcome != domain.OutcomeCompleted {
				continue
			}
			require.GreaterOrEqual(t, a.EndedAt.Sub(a.StartedAt), time.Duration(steps)*pace,
				"%s: %d paced steps of %s", m.Key, steps, pace)
			checked++
		}
	}
	require.Equal(t, 6, checked, "every dispatched mission completed once, paced")
	require.Equal(t, 1, reviewed, "the review of the glossary, paced")
}

// requireAttemptsTook checks that d's completed attempts (at least one) each took at least min.
func requireAttemptsTook(t *testing.T, d engine.MissionDetail, min time.Duration) {
	t.Helper()
	n := 0
	for _, a := range d.Attempts {
		if a.Outcome == domain.OutcomeCompleted {
			require.GreaterOrEqual(t, a.EndedAt.Sub(a.StartedAt), min, "%s: a paced step of %s", d.Mission.Title, min)
			n++
		}
	}
	require.Positive(t, n, "%s completed", d.Mission.Title)
}

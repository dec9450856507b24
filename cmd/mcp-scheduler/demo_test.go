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

// TestDemo_RunsToCompletion runs the README's first command on the built binary: the sample
// voyage completes, every mission lands and the history is printed. How long it takes is
// logged, not asserted (a loaded machine makes it slower, not wrong); the context bounds it.
func TestDemo_RunsToCompletion(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out, errb bytes.Buffer
	cmd := exec.CommandContext(ctx, binary, "demo")
	cmd.Env, cmd.Dir, cmd.Stdout, cmd.Stderr = s.env, s.repo, &out, &errb
	start := time.Now()
	require.NoError(t, cmd.Run(), "stdout:\n%s\nstderr:\n%s", out.String(), errb.String())
	took := time.Since(start)
	text := out.String()
	require.Contains(t, text, ", 6 missions dispatched, repository ", "the start counts the dispatched missions")
	require.Contains(t, text, "Voyage completed: 6 missions dispatched + 1 the scheduler added, ", "the end counts them the same way, and the review apart")
	require.Contains(t, text, "mcp-scheduler demo --keep", "the demo says how to keep what it made")
	require.NotContains(t, text, "no_leader", "no reason is printed before the demo's own scheduler leads")
	require.Contains(t, text, "Landed history of main:")
	require.Contains(t, text, "Watch it live from another terminal: "+binary+" --data-dir ", "the demo says how to watch it, naming itself by its path (not on PATH here)")
	require.Contains(t, text, "The temporary repository and data dir are now removed;")
	for _, key := range []string{"outline", "getting-started", "configuration", "glossary", "readme-usage", "readme-links"} {
		require.Contains(t, text, key+" ", key)
	}
	require.Contains(t, text, "configuration    failed (retry)", "the flaky mission is retried")
	require.Contains(t, text, "review of glossary", "the review runs before the glossary lands")
	require.Contains(t, text, "waits (hard_dependency)", "the demo says why missions wait")
	require.Equal(t, 6, strings.Count(text, "landed on main"))
	t.Logf("demo took %s", took)
}

// demo --keep says where it keeps the repository and the data dir, and they are there
// afterwards: the CLI reads the kept data dir, where the review mission's not_required
// landing says why.
func TestDemo_KeepLeavesTheDataDirAndSaysWhyAReviewLandsNothing(t *testing.T) {
	s := newSandbox(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out, errb bytes.Buffer
	cmd := exec.CommandContext(ctx, binary, "demo", "--keep")
	cmd.Env, cmd.Dir, cmd.Stdout, cmd.Stderr = s.env, s.repo, &out, &errb
	require.NoError(t, cmd.Run(), "stdout:\n%s\nstderr:\n%s", out.String(), errb.String())
	text := out.String()
	require.Contains(t, text, "--keep: the repository and the data dir stay in ")
	require.NotContains(t, text, "are removed")
	_, kept, ok := strings.Cut(text, "\nKept: repository ")
	require.True(t, ok, text)
	_, dataDir, ok := strings.Cut(strings.TrimSpace(kept), ", data dir ")
	require.True(t, ok, kept)
	t.Cleanup(func() { _ = os.RemoveAll(filepath.Dir(dataDir)) })

	ms := cliJSON[[]domain.Mission](s, "missions", "--data-dir", dataDir)
	require.Len(t, ms, 7)
	var review domain.Mission
	for _, m := range ms {
		if m.Kind == domain.KindReview {
			review = m
		}
	}
	require.Equal(t, domain.LandingNotRequired, review.Landing, "%+v", ms)
	show, errs, code := s.cli("missions", "show", review.ID, "--data-dir", dataDir)
	require.Equal(t, 0, code, errs)
	require.Contains(t, show, "landing     not_required: a review mission: its verdict is its result, it changes no files")
	// The JSON (get_mission's shape) carries the same reason as a field; a landed mission has none.
	det := cliJSON[engine.MissionDetail](s, "missions", "show", review.ID, "--data-dir", dataDir)
	require.Equal(t, "a review mission: its verdict is its result, it changes no files", det.LandingReason)
	for _, m := range ms {
		if m.Landing == domain.LandingLanded {
			require.Empty(t, cliJSON[engine.MissionDetail](s, "missions", "show", m.ID, "--data-dir", dataDir).LandingReason, m.Key)
		}
	}
}

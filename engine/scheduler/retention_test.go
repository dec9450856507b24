package scheduler_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/engine/scheduler"
)

func (h *harness) gone(id string) bool {
	_, err := h.eng.GetMission(h.ctx, id)
	if errors.Is(err, domain.ErrNotFound) {
		return true
	}
	require.NoError(h.t, err)
	return false
}

// PruneHistory removes a landed mission's records and its attempt directory (a dry run only
// reports them); the workspace cleanup then removes its worktree; the landed work stays on
// the target branch.
func TestPruneHistory_RemovesRecordsAndAttemptDir(t *testing.T) {
	h := newHarness(t)
	landed := h.create(engine.MissionSpec{Title: "lands", WriteArea: []string{"l.txt"}, Brief: "@write l.txt x\n@commit l\n@done"})
	h.until("it lands", func() bool { return h.mission(landed.ID).Landing == domain.LandingLanded })
	rec := h.runRecord(landed.ID)
	attempts := filepath.Join(h.data, "attempts", landed.ID)
	require.DirExists(t, attempts)
	require.DirExists(t, rec.Worktree.Path)
	time.Sleep(5 * time.Millisecond) // finished_at is in milliseconds

	dry, err := h.s.PruneHistory(h.ctx, time.Millisecond, true)
	require.NoError(t, err)
	require.Equal(t, []string{landed.ID}, dry.Missions)
	require.Equal(t, 1, dry.AttemptDirs)
	require.Positive(t, dry.AttemptBytes)
	require.DirExists(t, attempts, "a dry run changes nothing")
	require.False(t, h.gone(landed.ID))

	rep, err := h.s.PruneHistory(h.ctx, time.Millisecond, false)
	require.NoError(t, err)
	require.Equal(t, []string{landed.ID}, rep.Missions)
	require.Equal(t, dry.AttemptBytes, rep.AttemptBytes)
	require.NoDirExists(t, attempts)
	require.True(t, h.gone(landed.ID))
	diffs, err := h.eng.VerifyReplay(h.ctx)
	require.NoError(t, err)
	require.Empty(t, diffs)

	_, err = h.s.Cleanup(h.ctx, "", time.Nanosecond, false)
	require.NoError(t, err)
	require.NoDirExists(t, rec.Worktree.Path, "the workspace of a pruned mission goes with the next cleanup")
	body, ok := h.file("l.txt")
	require.True(t, ok)
	require.Equal(t, "x", body, "pruning history never touches the landed work")
}

// The leader prunes history with its periodic cleanup, by itself.
func TestPruneHistory_LeaderPrunesPeriodically(t *testing.T) {
	h := newHarness(t, func(_ *engine.Options, c *scheduler.Config) {
		c.CleanupEvery, c.Retention = 50*time.Millisecond, time.Millisecond
	})
	m := h.create(engine.MissionSpec{Title: "lands", WriteArea: []string{"p.txt"}, Brief: "@write p.txt y\n@commit p\n@done"})
	h.until("it lands and is pruned", func() bool { return h.gone(m.ID) })
	h.until("its attempt directory is gone", func() bool {
		_, ok := filepathExists(filepath.Join(h.data, "attempts", m.ID))
		return !ok
	})
}

func filepathExists(p string) (string, bool) {
	_, err := os.Stat(p)
	return p, err == nil
}

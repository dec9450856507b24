package scheduler_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/engine/scheduler"
)

// A node's landing lock runs for Config.LandingLockTTL (here 7 minutes, not the default
// minute): while the landing waits in its check (a real process, held until the test lets it
// go), the lock the node holds expires about that long after it was taken.
func TestLander_LandingLockRunsForTheConfiguredTTL(t *testing.T) {
	dir := t.TempDir()
	started, release := filepath.Join(dir, "started"), filepath.Join(dir, "go")
	const ttl = 7 * time.Minute
	h := newHarness(t, func(e *engine.Options, c *scheduler.Config) {
		c.Node, c.LandingLockTTL = "n1", ttl
		c.Repositories = []scheduler.RepoPolicy{{Path: e.DefaultRepository, Checks: [][]string{{"sh", "-c",
			`touch "$1"; while [ ! -e "$2" ]; do sleep 0.05; done`, "check", started, release}}}}
	})
	cm, err := h.eng.CreateMission(h.ctx, engine.MissionSpec{Title: "lands under a lock", WriteArea: []string{"a.txt"},
		Brief: "@write a.txt a\n@commit add a\n@done"}, "test")
	require.NoError(t, err)
	h.until("the landing's check runs", func() bool { _, err := os.Stat(started); return err == nil })
	locks, err := h.eng.LandingLocks(h.ctx)
	require.NoError(t, err)
	require.Len(t, locks, 1, "the node holds its target's lock while it lands")
	require.Equal(t, "n1", locks[0].Node)
	left := time.Until(locks[0].ExpiresAt)
	require.Greater(t, left, ttl-time.Minute-scheduler.DefaultLandingLockTTL, "the lock runs for the configured TTL, not the default: %v left", left)
	require.LessOrEqual(t, left, ttl)

	require.NoError(t, os.WriteFile(release, nil, 0o600))
	h.until("the mission lands", func() bool {
		m := h.mission(cm.Mission.ID)
		return m.State == domain.StateCompleted && m.Landing.Satisfies()
	})
}

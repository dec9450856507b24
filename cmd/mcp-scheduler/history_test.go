package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/engine/scheduler"
)

// `cleanup --history` prunes a cancelled mission older than --older-than (a dry run first
// only reports it) and keeps a pending one; bad flags are refused naming them.
func TestCLI_CleanupHistory(t *testing.T) {
	s := newSandbox(t)
	old := cliJSON[domain.Mission](s, "go", "obsolete work", "--write-area", "a/**")
	keep := cliJSON[domain.Mission](s, "go", "still wanted", "--write-area", "b/**")
	cliJSON[domain.Mission](s, "missions", "cancel", old.ID, "--reason", "obsolete")
	time.Sleep(10 * time.Millisecond) // finished_at is in milliseconds

	out, errs, code := s.cli("cleanup", "--history", "--older-than", "1ms", "--dry-run")
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "would remove 1 missions")
	_, _, code = s.cli("missions", "show", old.ID)
	require.Equal(t, 0, code, "a dry run changes nothing")

	rep := cliJSON[scheduler.HistoryReport](s, "cleanup", "--history", "--older-than", "1ms")
	require.Equal(t, []string{old.ID}, rep.Missions)
	require.Positive(t, rep.Removed.Events)
	_, _, code = s.cli("missions", "show", old.ID)
	require.NotEqual(t, 0, code, "the pruned mission is gone")
	require.Equal(t, domain.StatePending, cliJSON[engine.MissionDetail](s, "missions", "show", keep.ID).Mission.State)

	out, _, code = s.cli("cleanup", "--history")
	require.Equal(t, 0, code)
	require.Contains(t, out, "removed 0 missions", "nothing is 30 days old")

	_, errs, code = s.cli("cleanup", "--history", "--repo", s.repo)
	require.NotEqual(t, 0, code)
	require.Contains(t, errs, "--repo does not apply to --history")
	_, errs, code = s.cli("cleanup", "--history", "--older-than", "-1h")
	require.NotEqual(t, 0, code)
	require.Contains(t, errs, "--older-than")
}

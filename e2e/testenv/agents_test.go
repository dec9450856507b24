package testenv_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/agent/runner"
)

// KillAgentsOf reads pid.json without importing the runner (whose tests import this
// package): the names it reads must be the runner's.
func TestKillAgentsOf_ReadsTheRunnersPIDRecord(t *testing.T) {
	require.Equal(t, "pid.json", runner.FilePID)
	b, err := json.Marshal(runner.PIDRecord{ShimPID: 1, ShimStart: "b:2", PGID: 3})
	require.NoError(t, err)
	var got map[string]any
	require.NoError(t, json.Unmarshal(b, &got))
	require.Equal(t, 1.0, got["shim_pid"])
	require.Equal(t, "b:2", got["shim_start"])
	require.Equal(t, 3.0, got["pgid"])
}

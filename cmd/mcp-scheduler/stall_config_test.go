package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
)

// stall_threshold and stall_timeout are per-profile keys; a timeout shorter than the
// threshold, a negative or unreadable duration is refused naming the profile and the key.
func TestConfig_ProfileStallKeys(t *testing.T) {
	t.Parallel()
	base := "[[profiles]]\nname = \"x\"\nruntime = \"codex\"\n"
	c, err := loadConfig(writeConfig(t, base+"stall_threshold = \"5m\"\nstall_timeout = \"30m\"\n"), true, envOf(map[string]string{"HOME": "/h"}))
	require.NoError(t, err)
	require.NoError(t, c.validate())
	require.Equal(t, agent.Duration(5*time.Minute), c.Profiles[0].StallThreshold)
	require.Equal(t, agent.Duration(30*time.Minute), c.Profiles[0].StallTimeout)

	for body, want := range map[string]string{
		"stall_threshold = \"10m\"\nstall_timeout = \"5m\"\n": "profiles[0]: profile x: stall_timeout 5m0s is shorter than stall_threshold 10m0s",
		"stall_timeout = \"-1m\"\n":                           "profiles[0]: profile x: stall_timeout -1m0s must not be negative",
		"stall_timeout = \"soon\"\n":                          "soon",
		"stall_timeot = \"5m\"\n":                             "unknown key profiles.stall_timeot",
	} {
		c, err := loadConfig(writeConfig(t, base+body), true, envOf(map[string]string{"HOME": "/h"}))
		if err == nil {
			err = c.validate()
		}
		require.ErrorContains(t, err, want, body)
	}
}

package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// [scheduler] rate_limit_margin defaults to 30 s and reaches the loop's rate-limit policy;
// [[profiles]] limit_group reaches the profile; bad values are refused naming the key.
func TestConfig_RateLimitKeys(t *testing.T) {
	t.Parallel()
	env := envOf(map[string]string{"HOME": "/h"})
	require.Equal(t, 30*time.Second, defaults(env).Scheduler.RateLimitMargin.D())

	c, err := loadConfig(writeConfig(t, "[scheduler]\nrate_limit_margin = \"2m\"\n[[profiles]]\nname = \"claude-a\"\nruntime = \"claude-code\"\nlimit_group = \"anthropic\"\n"), true, env)
	require.NoError(t, err)
	require.NoError(t, c.validate())
	require.Equal(t, 2*time.Minute, c.Scheduler.RateLimitMargin.D())
	require.Equal(t, "anthropic", c.Profiles[0].LimitGroup)
	require.Equal(t, "anthropic", c.Profiles[0].RateGroup())

	for body, want := range map[string]string{
		"[scheduler]\nrate_limit_margin = \"0s\"\n":                                                 "scheduler.rate_limit_margin: 0s must be 1s to 1h",
		"[scheduler]\nrate_limit_margin = \"2h\"\n":                                                 "scheduler.rate_limit_margin",
		"[scheduler]\nrate_limit_margn = \"2s\"\n":                                                  "rate_limit_margn",
		"[[profiles]]\nname = \"c\"\nruntime = \"claude-code\"\nlimit_group = \"Anthropic Team\"\n": "limit_group \"Anthropic Team\": use 1-64 characters",
	} {
		c, err := loadConfig(writeConfig(t, body), true, env)
		if err == nil {
			err = c.validate()
		}
		require.ErrorContains(t, err, want, body)
	}
}

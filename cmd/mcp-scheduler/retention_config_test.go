package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// [retention] defaults to 30 days in batches of 100; the file overrides it, 0 turns it off
// (the loop's Retention is then negative), and bad values are refused naming the key.
func TestConfig_Retention(t *testing.T) {
	t.Parallel()
	env := envOf(map[string]string{"HOME": "/h"})
	c := defaults(env)
	require.Equal(t, 30*24*time.Hour, c.Retention.MaxAge.D())
	require.Equal(t, 100, c.Retention.Batch)
	require.Equal(t, 20*time.Millisecond, c.Retention.BatchPause.D())
	require.Equal(t, 30*24*time.Hour, retentionAge(c.Retention.MaxAge.D()))

	c, err := loadConfig(writeConfig(t, "[retention]\nmax_age = \"168h\"\nbatch = 10\nbatch_pause = \"5ms\"\n"), true, env)
	require.NoError(t, err)
	require.NoError(t, c.validate())
	require.Equal(t, 7*24*time.Hour, c.Retention.MaxAge.D())
	require.Equal(t, 10, c.Retention.Batch)

	c, err = loadConfig(writeConfig(t, "[retention]\nmax_age = \"0s\"\n"), true, env)
	require.NoError(t, err)
	require.NoError(t, c.validate())
	require.Negative(t, retentionAge(c.Retention.MaxAge.D()), "0 keeps all history")

	for body, key := range map[string]string{
		"[retention]\nmax_age = \"-1h\"\n":    "retention.max_age",
		"[retention]\nbatch = 0\n":            "retention.batch",
		"[retention]\nbatch_pause = \"0s\"\n": "retention.batch_pause",
		"[retention]\nmax_days = 3\n":         "unknown key retention.max_days",
	} {
		c, err := loadConfig(writeConfig(t, body), true, env)
		if err == nil {
			err = c.validate()
		}
		require.ErrorContains(t, err, key, body)
	}
}

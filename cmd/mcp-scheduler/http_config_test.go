package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// [http] bounds its sessions by default at 1,000 and 1 hour idle; the file overrides both,
// and bad values are refused naming the key and the range.
func TestConfig_HTTPSessionBounds(t *testing.T) {
	t.Parallel()
	env := envOf(map[string]string{"HOME": "/h"})
	c := defaults(env)
	require.Equal(t, 1000, c.HTTP.MaxSessions)
	require.Equal(t, time.Hour, c.HTTP.SessionIdle.D())

	c, err := loadConfig(writeConfig(t, "[http]\nmax_sessions = 50\nsession_idle = \"10m\"\n"), true, env)
	require.NoError(t, err)
	require.NoError(t, c.validate())
	require.Equal(t, 50, c.HTTP.MaxSessions)
	require.Equal(t, 10*time.Minute, c.HTTP.SessionIdle.D())

	for body, want := range map[string]string{
		"[http]\nmax_sessions = 0\n":           "http.max_sessions: 0 must be 1 to 1000000",
		"[http]\nmax_sessions = -5\n":          "http.max_sessions",
		"[http]\nsession_idle = \"0s\"\n":      "http.session_idle: 0s must be 1s to 168h",
		"[http]\nsession_idle = \"500ms\"\n":   "http.session_idle",
		"[http]\nsession_idle = \"1000h\"\n":   "http.session_idle",
		"[http]\nsession_idle = \"an hour\"\n": "session_idle",
	} {
		c, err := loadConfig(writeConfig(t, body), true, env)
		if err == nil {
			err = c.validate()
		}
		require.ErrorContains(t, err, want, body)
	}
}

package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// [storage] url selects PostgreSQL; $MCP_SCHEDULER_DATABASE_URL overrides the file; no URL is
// the embedded SQLite; a URL that is not postgres:// is refused naming the key and the
// variable, without its password.
func TestConfig_StorageURL(t *testing.T) {
	t.Parallel()
	env := envOf(map[string]string{"HOME": "/h"})
	c, err := loadConfig(writeConfig(t, ""), true, env)
	require.NoError(t, err)
	require.NoError(t, c.validate())
	require.Equal(t, "sqlite", c.Storage.Backend())

	c, err = loadConfig(writeConfig(t, "[storage]\nurl = \"postgres://sched:pw@db.internal:5432/sched?sslmode=require\"\n"), true, env)
	require.NoError(t, err)
	require.NoError(t, c.validate())
	require.Equal(t, "postgres", c.Storage.Backend())

	withEnv := envOf(map[string]string{"HOME": "/h", EnvDatabaseURL: "postgresql://127.0.0.1/other"})
	c, err = loadConfig(writeConfig(t, "[storage]\nurl = \"postgres://db.internal/sched\"\n"), true, withEnv)
	require.NoError(t, err)
	require.Equal(t, "postgresql://127.0.0.1/other", c.Storage.URL, "the variable overrides the file")

	for _, bad := range []string{"mysql://u:secret@h/db", "/var/lib/db.sqlite", "postgres:///nohost"} {
		c, err := loadConfig(writeConfig(t, "[storage]\nurl = \""+bad+"\"\n"), true, env)
		require.NoError(t, err)
		err = c.validate()
		require.ErrorContains(t, err, "storage.url (or MCP_SCHEDULER_DATABASE_URL)", bad)
		require.ErrorContains(t, err, "leave it empty for the embedded SQLite database", bad)
		require.NotContains(t, err.Error(), "secret", "the password is not shown")
	}
}

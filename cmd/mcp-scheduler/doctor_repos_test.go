package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// doctor reports each configured repository path on its own row — a good checkout with its
// top level; a missing path, a directory that is not a checkout and a file each with what to
// do, naming the configuration file — and the database's row stays about the database.
func TestDoctor_ReportsABadRepositoryPathOnItsOwnRow(t *testing.T) {
	s := newSandbox(t)
	missing := filepath.Join(s.home, "nowhere")
	plain := filepath.Join(s.home, "plain")
	require.NoError(t, os.Mkdir(plain, 0o700))
	file := filepath.Join(s.home, "file.txt")
	require.NoError(t, os.WriteFile(file, []byte("x"), 0o600))
	writeSandboxConfig(t, s, "[[repositories]]\npath = \""+s.repo+"\"\n[[repositories]]\npath = \""+missing+"\"\n"+
		"[[repositories]]\npath = \""+plain+"\"\n[[repositories]]\npath = \""+file+"\"\n")
	cfg := filepath.Join(s.home, "config", "mcp-scheduler", "config.toml")

	checks, code := doctorChecks(t, s)
	require.Equal(t, 1, code, "%+v", checks)
	db := checks["database"]
	require.True(t, db.OK, "the database is fine: %+v", db)
	require.NotContains(t, db.Detail, "repositories")
	good := checks["repository "+s.repo]
	require.True(t, good.OK, "%+v", good)
	require.Contains(t, good.Detail, "git checkout at ")
	for path, want := range map[string]string{
		missing: missing + " does not exist: clone or create the repository there, or correct or remove its [[repositories]] path in " + cfg,
		plain:   plain + " is not a git checkout (",
		file:    file + " is a file, not a directory: point its [[repositories]] path in " + cfg + " at a git checkout",
	} {
		c, ok := checks["repository "+path]
		require.True(t, ok, "a row for %s: %+v", path, checks)
		require.False(t, c.OK, "%+v", c)
		require.Contains(t, c.Detail, want)
	}
	require.Contains(t, checks["repository "+plain].Detail, "run git init there, or point its [[repositories]] path in "+cfg+" at a checkout")
}

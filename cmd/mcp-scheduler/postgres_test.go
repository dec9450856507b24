package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/e2e/testenv"
	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/storage/postgres/pgtest"
)

// With MCP_SCHEDULER_DATABASE_URL set, a daemon and the CLI keep everything in PostgreSQL:
// missions given with `go` run on the reference agent, complete and land, `missions list`
// and `doctor` read them from the server, and no SQLite file appears in the data directory.
func TestPostgres_DaemonAndCLIRunMissionsOnTheServer(t *testing.T) {
	s := newSandbox(t)
	url := pgtest.Database(t)
	s.env = append(s.env, EnvDatabaseURL+"="+url)
	startReloadDaemon(t, s, reloadConfig("0"))
	var ids []string
	for i := range 3 {
		m := cliJSON[domain.Mission](s, "go", fmt.Sprintf("mission %d", i), "--brief", "@done ok",
			"--write-area", fmt.Sprintf("f%d.txt", i))
		ids = append(ids, m.ID)
	}
	for _, id := range ids {
		testenv.WaitFor(t, "mission "+id+" to land", func() bool {
			d := cliJSON[engine.MissionDetail](s, "missions", "show", id)
			return d.Mission.State == domain.StateCompleted && d.Mission.Landing.Satisfies()
		})
	}
	listed := cliJSON[[]domain.Mission](s, "missions", "list", "--state", "completed")
	require.Len(t, listed, 3)
	_, err := os.Stat(filepath.Join(s.dataDir, "mcp-scheduler.db"))
	require.ErrorIs(t, err, os.ErrNotExist, "nothing went to SQLite")
	out, errs, code := s.cli("doctor")
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "database")
	require.Contains(t, out, "postgres postgres://")
	require.False(t, strings.Contains(out, "mcp-scheduler.db"), out)
}

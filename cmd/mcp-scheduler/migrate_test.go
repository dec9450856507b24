package main

import (
	"context"
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/e2e/testenv"
	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/storage/postgres/pgtest"
)

// migrate refuses while a daemon leads the SQLite store, naming its pid; once it stopped, the
// copy succeeds, prints the counts, and PostgreSQL holds the same missions. A
// second run into the same database is refused.
func TestMigrate_CopiesTheStoreOnceTheDaemonStopped(t *testing.T) {
	s := newSandbox(t)
	var ids []string
	for _, title := range []string{"first", "second"} {
		m := cliJSON[domain.Mission](s, "go", title, "--brief", "@done ok", "--write-area", title+".txt")
		ids = append(ids, m.ID)
	}
	url := pgtest.Database(t)

	d := s.start(nil, "daemon")
	testenv.WaitFor(t, "the daemon leads", func() bool { return strings.Contains(d.stderrText(), "leading the scheduler loop") })
	out, errs, code := s.cli("migrate", "--to", url)
	require.Equal(t, 1, code, out+errs)
	require.Contains(t, errs, "stop serve/daemon (pid "+strconv.Itoa(d.cmd.Process.Pid)+" on host ")
	require.NoError(t, d.cmd.Process.Signal(os.Interrupt))
	require.Equal(t, 0, d.wait())

	res := cliJSON[migrateResult](s, "migrate", "--to", url)
	require.True(t, res.OK)
	counts := map[string]int64{}
	for _, c := range res.Tables {
		require.Equal(t, c.SQLite, c.Postgres, c.Table)
		counts[c.Table] = c.Postgres
	}
	require.Equal(t, int64(2), counts["missions"])
	require.Positive(t, counts["events"])

	conn, err := pgx.Connect(context.Background(), url)
	require.NoError(t, err)
	defer conn.Close(context.Background())
	for i, id := range ids {
		var title string
		require.NoError(t, conn.QueryRow(context.Background(), "SELECT title FROM missions WHERE id = $1", id).Scan(&title))
		require.Equal(t, []string{"first", "second"}[i], title)
	}

	out, errs, code = s.cli("migrate", "--to", url)
	require.Equal(t, 1, code, out)
	require.Contains(t, errs, "is not empty")
	require.Contains(t, errs, "CREATE DATABASE")

	// The copy is a working store: the CLI on it shows each mission as SQLite did, and a
	// daemon on it runs new work.
	before := map[string]engine.MissionDetail{}
	for _, id := range ids {
		before[id] = cliJSON[engine.MissionDetail](s, "missions", "show", id)
	}
	s.env = append(s.env, EnvDatabaseURL+"="+url)
	for _, id := range ids {
		after := cliJSON[engine.MissionDetail](s, "missions", "show", id)
		require.Equal(t, before[id].Mission.State, after.Mission.State, id)
		require.Equal(t, before[id].Mission.Landing, after.Mission.Landing, id)
		require.Equal(t, len(before[id].Attempts), len(after.Attempts), id)
	}
	pg := startReloadDaemon(t, s, reloadConfig("0")) // a reference-agent profile
	m := cliJSON[domain.Mission](s, "go", "third, on PostgreSQL", "--brief", "@done ok", "--write-area", "third.txt")
	testenv.WaitFor(t, "the mission on the copy to complete", func() bool {
		if pg.cmd.ProcessState != nil {
			t.Fatalf("the daemon on the copy exited: %s", pg.stderrText())
		}
		return cliJSON[engine.MissionDetail](s, "missions", "show", m.ID).Mission.State == domain.StateCompleted
	})
}

// The table form lists every table with both counts; a bad URL fails without its password.
func TestMigrate_TableAndBadURL(t *testing.T) {
	s := newSandbox(t)
	cliJSON[domain.Mission](s, "go", "only", "--brief", "@done ok")
	out, errs, code := s.cli("migrate", "--to", pgtest.Database(t))
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "TABLE\tSQLITE\tPOSTGRESQL")
	require.Contains(t, out, "missions\t1\t1\tok")
	require.Contains(t, out, "copied ")
	require.Contains(t, out, EnvDatabaseURL)

	out, errs, code = s.cli("migrate", "--to", "postgres://mover:s3cr3t@127.0.0.1:1/db?connect_timeout=5")
	require.Equal(t, 1, code, out)
	require.NotContains(t, out+errs, "s3cr3t")
	require.Contains(t, errs, "postgres://mover:xxxxx@127.0.0.1:1/db")

	out, errs, code = s.cli("migrate", "--to", pgtest.Database(t), "--from", s.home+"/none.db")
	require.Equal(t, 1, code, out)
	require.Contains(t, errs, "there is no SQLite store at "+s.home+"/none.db")
	var res migrateResult
	require.Error(t, json.Unmarshal([]byte(out), &res), "nothing printed on stdout: %q", out)
}

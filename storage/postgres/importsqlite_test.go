package postgres_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/storage"
	"github.com/mcp-scheduler/mcp-scheduler/storage/postgres"
	"github.com/mcp-scheduler/mcp-scheduler/storage/postgres/pgtest"
)

// fillSQLite makes a SQLite store at path through the engine: a voyage of dependent
// missions (one completed and landed, one failed for good, one escalated, one held), an
// agent, a wave and the events all of that wrote. It returns when the store is closed.
func fillSQLite(t *testing.T, path string) {
	t.Helper()
	ctx := context.Background()
	st, err := storage.Open(ctx, path, storage.Options{})
	require.NoError(t, err)
	defer func() { require.NoError(t, st.Close()) }()
	e := engine.New(st, engine.Options{DefaultRepository: "/repo"})
	d, err := e.Dispatch(ctx, engine.VoyageSpec{Title: "voyage", Goal: "move it", Missions: []engine.MissionSpec{
		{Key: "a", Title: "a", WriteArea: []string{"a/**"}},
		{Key: "b", Title: "b", WriteArea: []string{"b/**"}, DependsOn: []string{"a"}},
		{Key: "c", Title: "c", WriteArea: []string{"c/**"}},
		{Key: "d", Title: "d", WriteArea: []string{"d/**"}},
	}}, "test")
	require.NoError(t, err)
	a := acquire(t, e, d.IDs["a"], "agent-1")
	usage := &domain.Usage{InputTokens: 1200, OutputTokens: 340, CostUSD: 0.125}
	_, err = e.Complete(ctx, a.Fence(), domain.WorkerResult{Status: "completed", Summary: "done", Usage: usage})
	require.NoError(t, err)
	_, err = e.RecordLanding(ctx, domain.Landing{MissionID: a.ID, Attempt: 1, Status: "landed", Commit: "abc123",
		ChangedFiles: []string{"a/x.go"}, DurationMS: 42, At: time.Now()}, domain.LandingLanded)
	require.NoError(t, err)
	c := acquire(t, e, d.IDs["c"], "agent-2")
	_, err = e.Fail(ctx, c.Fence(), engine.FailRequest{Failure: domain.Failure{Kind: "test", Summary: "it broke"}, Final: true})
	require.NoError(t, err)
	_, err = e.Escalate(ctx, engine.EscalationSpec{MissionIDs: []string{d.IDs["d"]}, Reason: "unclear", DecisionRequired: "which way"}, "test")
	require.NoError(t, err)
	_, err = e.RecordHolds(ctx, []engine.Hold{{MissionID: d.IDs["b"], UpdatedAt: time.Now(),
		Reason: engine.Reason{Code: "waiting", Message: "waits for a", MissionID: d.IDs["a"], Since: time.Now()}}})
	require.NoError(t, err)
	require.NoError(t, e.TouchAgent(ctx, domain.Agent{ID: "agent-1", Kind: "external", Capabilities: []string{"go"}, LastSeen: time.Now()}))
	_, err = e.RecordWave(ctx, domain.Wave{At: time.Now(), Runnable: 2})
	require.NoError(t, err)
	route := func(ev domain.Event) []engine.Notice {
		if ev.Type != "escalation.raised" {
			return nil
		}
		return []engine.Notice{{Sink: "hook", Type: ev.Type, Body: []byte(`{"seq":` + fmt.Sprint(ev.Seq) + `}`), NextAt: time.Now()}}
	}
	_, queued, err := e.FillOutbox(ctx, route, 1000)
	require.NoError(t, err)
	require.Equal(t, 1, queued)
}

func acquire(t *testing.T, e *engine.Engine, id, agent string) domain.Mission {
	t.Helper()
	m, err := e.Acquire(context.Background(), engine.AcquireRequest{AgentID: agent, MissionID: id, Start: true})
	require.NoError(t, err)
	return m
}

// importFile copies the SQLite file at path into the database at url.
func importFile(t *testing.T, path, url string) (postgres.ImportReport, error) {
	t.Helper()
	ex, err := storage.OpenExport(context.Background(), path)
	require.NoError(t, err)
	defer func() { require.NoError(t, ex.Close()) }()
	return postgres.ImportSQLite(context.Background(), ex.DB, url, nil)
}

// TestImportSQLite_CopiesEveryRow fills a SQLite store through the engine, imports it and
// compares every table row by row; the copy is then a working store whose sequences go on
// past the copied ids.
func TestImportSQLite_CopiesEveryRow(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mcp-scheduler.db")
	fillSQLite(t, path)
	url := pgtest.Database(t)
	rep, err := importFile(t, path, url)
	require.NoError(t, err)
	require.Equal(t, postgres.SchemaVersion(), rep.SchemaVersion)
	lite, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	require.NoError(t, err)
	defer lite.Close()
	pg, err := pgx.Connect(context.Background(), url)
	require.NoError(t, err)
	defer pg.Close(context.Background())
	seen := map[string]int64{}
	for _, tc := range rep.Tables {
		require.Equal(t, tc.SQLite, tc.Postgres, tc.Table)
		cols := pgColumns(t, pg, tc.Table)
		want := sqliteRows(t, lite, tc.Table, cols)
		got := pgRows(t, pg, tc.Table, cols)
		require.Equal(t, want, got, "table %s", tc.Table)
		require.Len(t, got, int(tc.Postgres), tc.Table)
		seen[tc.Table] = tc.Postgres
	}
	for _, table := range []string{"voyages", "missions", "dependencies", "write_areas", "attempts", "landings", "escalations", "events", "holds", "waves", "agents", "notices"} {
		require.Positive(t, seen[table], "the fill put rows in %s", table)
	}
	st, err := postgres.Open(context.Background(), url, postgres.Options{})
	require.NoError(t, err)
	defer func() { require.NoError(t, st.Close()) }()
	require.NoError(t, st.View(context.Background(), func(r engine.Reader) error {
		counts, err := r.MissionCounts(context.Background())
		require.Equal(t, 1, counts[domain.StateCompleted], "the counters came along: %+v", counts)
		require.Equal(t, 1, counts[domain.StateFailed], "the counters came along: %+v", counts)
		return err
	}))
	for _, id := range [][2]string{{"events", "seq"}, {"waves", "id"}, {"notices", "id"}} {
		var before, next int64
		require.NoError(t, pg.QueryRow(context.Background(), fmt.Sprintf("SELECT coalesce(max(%s), 0) FROM %s", id[1], id[0])).Scan(&before))
		require.NoError(t, pg.QueryRow(context.Background(), fmt.Sprintf("SELECT nextval(pg_get_serial_sequence('%s', '%s'))", id[0], id[1])).Scan(&next))
		require.Greater(t, next, before, "the next %s.%s is past the copied ones", id[0], id[1])
	}
}

// pgColumns lists a table's columns as the PostgreSQL schema has them.
func pgColumns(t *testing.T, pg *pgx.Conn, table string) []string {
	rows, err := pg.Query(context.Background(), `SELECT column_name::text FROM information_schema.columns
WHERE table_schema = current_schema() AND table_name = $1 ORDER BY ordinal_position`, table)
	require.NoError(t, err)
	cols, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	require.NotEmpty(t, cols, table)
	return cols
}

// sqliteRows reads every row of a SQLite table, values normalised and rows sorted.
func sqliteRows(t *testing.T, db *sql.DB, table string, cols []string) []string {
	rows, err := db.Query("SELECT " + strings.Join(cols, ", ") + " FROM " + table)
	require.NoError(t, err)
	defer rows.Close()
	var out []string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		require.NoError(t, rows.Scan(ptrs...))
		out = append(out, rowText(vals))
	}
	require.NoError(t, rows.Err())
	slices.Sort(out)
	return out
}

// pgRows reads every row of a PostgreSQL table, values normalised and rows sorted.
func pgRows(t *testing.T, pg *pgx.Conn, table string, cols []string) []string {
	rows, err := pg.Query(context.Background(), "SELECT "+strings.Join(cols, ", ")+" FROM "+table)
	require.NoError(t, err)
	defer rows.Close()
	var out []string
	for rows.Next() {
		vals, err := rows.Values()
		require.NoError(t, err)
		out = append(out, rowText(vals))
	}
	require.NoError(t, rows.Err())
	slices.Sort(out)
	return out
}

// rowText renders a row with each value's Go kind, after the drivers' differences are
// normalised (SQLite may return TEXT as []byte).
func rowText(vals []any) string {
	parts := make([]string, len(vals))
	for i, v := range vals {
		if b, ok := v.([]byte); ok {
			v = string(b)
		}
		parts[i] = fmt.Sprintf("%T:%v", v, v)
	}
	return strings.Join(parts, " | ")
}

// TestImportSQLite_RefusesANonEmptyTarget imports twice into one database: the second is
// refused, naming the tables, and changes nothing.
func TestImportSQLite_RefusesANonEmptyTarget(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mcp-scheduler.db")
	fillSQLite(t, path)
	url := pgtest.Database(t)
	first, err := importFile(t, path, url)
	require.NoError(t, err)
	_, err = importFile(t, path, url)
	require.ErrorIs(t, err, postgres.ErrTargetNotEmpty)
	require.ErrorContains(t, err, "missions")
	require.ErrorContains(t, err, "CREATE DATABASE")
	pg, err := pgx.Connect(context.Background(), url)
	require.NoError(t, err)
	defer pg.Close(context.Background())
	for _, tc := range first.Tables {
		var n int64
		require.NoError(t, pg.QueryRow(context.Background(), "SELECT count(*) FROM "+tc.Table).Scan(&n))
		require.Equal(t, tc.Postgres, n, tc.Table)
	}
}

// TestImportSQLite_RefusesAnotherSchemaVersion sets the SQLite file's version one below and
// one above this binary's: both are refused with what to do, and nothing is created.
func TestImportSQLite_RefusesAnotherSchemaVersion(t *testing.T) {
	for _, c := range []struct {
		delta int
		says  string
	}{{-1, "mcp-scheduler status migrates it"}, {+1, "the mcp-scheduler that wrote the store"}} {
		t.Run(fmt.Sprint(c.delta), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "mcp-scheduler.db")
			fillSQLite(t, path)
			db, err := sql.Open("sqlite", "file:"+path)
			require.NoError(t, err)
			_, err = db.Exec(fmt.Sprintf("PRAGMA user_version = %d", storage.SchemaVersion()+c.delta))
			require.NoError(t, err)
			require.NoError(t, db.Close())
			url := pgtest.Database(t)
			_, err = importFile(t, path, url)
			require.ErrorIs(t, err, postgres.ErrSchemaMismatch)
			require.ErrorContains(t, err, c.says)
			pg, err := pgx.Connect(context.Background(), url)
			require.NoError(t, err)
			defer pg.Close(context.Background())
			var tables int
			require.NoError(t, pg.QueryRow(context.Background(),
				"SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema()").Scan(&tables))
			require.Zero(t, tables, "a refused import leaves the database untouched")
		})
	}
}

// TestImportSQLite_BadURLHidesThePassword gives a URL nothing listens on, and one that does
// not parse: the errors name the server without the password.
func TestImportSQLite_BadURLHidesThePassword(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mcp-scheduler.db")
	fillSQLite(t, path)
	for _, url := range []string{"postgres://mover:s3cr3t@127.0.0.1:1/db?connect_timeout=5", "postgres://mover:s3cr3t@[::1/db", "host=127.0.0.1 port=1 password=s3cr3t connect_timeout=5"} {
		_, err := importFile(t, path, url)
		require.Error(t, err, url)
		require.NotContains(t, err.Error(), "s3cr3t")
	}
}

// TestImportSQLite_MismatchRollsBack gives the SQLite store a counter that disagrees with its
// rows: the import fails saying which table, and leaves no row in PostgreSQL.
func TestImportSQLite_MismatchRollsBack(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mcp-scheduler.db")
	fillSQLite(t, path)
	db, err := sql.Open("sqlite", "file:"+path)
	require.NoError(t, err)
	_, err = db.Exec("UPDATE mission_counts SET n = n + 5 WHERE state = 'pending'")
	require.NoError(t, err)
	require.NoError(t, db.Close())
	url := pgtest.Database(t)
	_, err = importFile(t, path, url)
	require.ErrorIs(t, err, postgres.ErrImportMismatch)
	require.ErrorContains(t, err, "mission_counts")
	pg, err := pgx.Connect(context.Background(), url)
	require.NoError(t, err)
	defer pg.Close(context.Background())
	for _, table := range []string{"voyages", "missions", "events", "attempts"} {
		var n int64
		require.NoError(t, pg.QueryRow(context.Background(), "SELECT count(*) FROM "+table).Scan(&n))
		require.Zero(t, n, "%s: the failed copy was rolled back", table)
	}
}

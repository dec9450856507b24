package storage

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// An attempt's workspace is a row of workspaces: put (and put again for the same attempt),
// read one, list a mission's in attempt order, mark removed; an unknown one is ErrNotFound.
func TestWorkspaces_PutGetListRemove(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "w.db"), Options{})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	at := time.UnixMilli(1_700_000_000_000).UTC()
	a1 := engine.WorkspaceRecord{MissionID: "msn_1", Attempt: 1, State: engine.WorkspaceActive, CreatedAt: at,
		Workspace: engine.Workspace{Path: "/d/w/a1", Branch: "mcp-scheduler/msn_1/a1", BaseCommit: "abc", Strategy: "worktree",
			RepoID: "r1", TargetBranch: "main"}}
	a2 := a1
	a2.Attempt, a2.Path, a2.Resumed = 2, "/d/w/a1", true
	require.NoError(t, s.Update(ctx, func(tx engine.Tx) error {
		for _, w := range []engine.WorkspaceRecord{a2, a1} {
			if err := tx.WorkspacePut(ctx, &w); err != nil {
				return err
			}
		}
		a1.BaseCommit = "def" // the same attempt again replaces its row
		return tx.WorkspacePut(ctx, &a1)
	}))
	require.NoError(t, s.View(ctx, func(r engine.Reader) error {
		got, err := r.WorkspaceGet(ctx, "msn_1", 1)
		require.NoError(t, err)
		require.Equal(t, a1, got)
		list, err := r.WorkspaceList(ctx, "msn_1")
		require.NoError(t, err)
		require.Equal(t, []engine.WorkspaceRecord{a1, a2}, list)
		_, err = r.WorkspaceGet(ctx, "msn_1", 3)
		require.ErrorIs(t, err, domain.ErrNotFound)
		return nil
	}))
	gone := at.Add(time.Hour)
	require.NoError(t, s.Update(ctx, func(tx engine.Tx) error { return tx.WorkspaceMarkRemoved(ctx, "msn_1", 1, gone) }))
	err = s.Update(ctx, func(tx engine.Tx) error { return tx.WorkspaceMarkRemoved(ctx, "msn_2", 1, gone) })
	require.ErrorIs(t, err, domain.ErrNotFound)
	require.NoError(t, s.View(ctx, func(r engine.Reader) error {
		got, err := r.WorkspaceGet(ctx, "msn_1", 1)
		require.NoError(t, err)
		require.Equal(t, engine.WorkspaceRemoved, got.State)
		require.Equal(t, gone, got.RemovedAt)
		return nil
	}))
}

// A database written before schema 8 kept the workspace inside missions.run ("worktree" for
// the scheduler's run records, "workspace" for a claim without a preparer); the migration
// carries it into workspaces and takes it out of the run record, leaving the rest.
func TestWorkspaces_CarriedOverFromRunRecords(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "w.db")
	ms, err := migrations()
	require.NoError(t, err)
	db, err := sql.Open("sqlite", dsn(path, Options{}.withDefaults(), true))
	require.NoError(t, err)
	for _, m := range ms[:7] {
		_, err = db.Exec(m.sql)
		require.NoError(t, err, m.name)
	}
	ins := `INSERT INTO missions (id, title, brief, repository, state, attempt, run, started_at, created_at, updated_at)
 VALUES (?, 't', '', '/r', 'running', ?, ?, 5, 0, 1)`
	for _, m := range []struct {
		id      string
		attempt int
		run     any
	}{
		{"msn_managed", 2, `{"mode":"managed","attempt":2,"pid":42,"worktree":{"path":"/d/w/a2","branch":"mcp-scheduler/msn_managed/a2",` +
			`"base_commit":"abc","strategy":"worktree","resumed":true,"repo_id":"r1","mission_id":"msn_managed","attempt":2,"target_branch":"main"}}`},
		{"msn_pull", 1, `{"mode":"pull","agent":"codex","workspace":{"path":"/d/w/p1","branch":"b","base_commit":"def","strategy":"snapshot","read_only":true}}`},
		{"msn_norun", 1, nil},
		{"msn_noworkspace", 1, `{"mode":"pull","agent":"x"}`},
	} {
		_, err = db.Exec(ins, m.id, m.attempt, m.run)
		require.NoError(t, err)
	}
	_, err = db.Exec(`PRAGMA user_version = 7`)
	require.NoError(t, err)
	require.NoError(t, db.Close())

	s, err := Open(ctx, path, Options{})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	require.NoError(t, s.View(ctx, func(r engine.Reader) error {
		got, err := r.WorkspaceGet(ctx, "msn_managed", 2)
		require.NoError(t, err)
		require.Equal(t, engine.WorkspaceRecord{MissionID: "msn_managed", Attempt: 2, State: engine.WorkspaceActive,
			CreatedAt: time.UnixMilli(5).UTC(), Workspace: engine.Workspace{Path: "/d/w/a2", Branch: "mcp-scheduler/msn_managed/a2",
				BaseCommit: "abc", Strategy: "worktree", Resumed: true, RepoID: "r1", TargetBranch: "main"}}, got)
		got, err = r.WorkspaceGet(ctx, "msn_pull", 1)
		require.NoError(t, err)
		require.Equal(t, engine.Workspace{Path: "/d/w/p1", Branch: "b", BaseCommit: "def", Strategy: "snapshot", ReadOnly: true}, got.Workspace)
		for _, id := range []string{"msn_norun", "msn_noworkspace"} {
			list, err := r.WorkspaceList(ctx, id)
			require.NoError(t, err)
			require.Empty(t, list, id)
		}
		m, err := r.MissionGet(ctx, "msn_managed")
		require.NoError(t, err)
		require.JSONEq(t, `{"mode":"managed","attempt":2,"pid":42}`, string(m.Run))
		m, err = r.MissionGet(ctx, "msn_noworkspace")
		require.NoError(t, err)
		require.JSONEq(t, `{"mode":"pull","agent":"x"}`, string(m.Run))
		return nil
	}))
}

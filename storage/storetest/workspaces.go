package storetest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// exerciseWorkspaces: an attempt's workspace record — put (again for the same attempt:
// replaced), read one, list a mission's in attempt order, mark removed; unknown ones are
// ErrNotFound.
func exerciseWorkspaces(t *testing.T, open Opener) {
	record := func(e *env, id string, attempt int, path string) engine.WorkspaceRecord {
		return engine.WorkspaceRecord{MissionID: id, Attempt: attempt, State: engine.WorkspaceActive, CreatedAt: e.next(),
			Workspace: engine.Workspace{Path: path, Branch: "mcp-scheduler/" + id + "/a1", BaseCommit: "abc",
				Strategy: "worktree", RepoID: "r1", TargetBranch: "main"}}
	}
	put := func(e *env, ws ...engine.WorkspaceRecord) {
		e.update(func(tx engine.Tx) error {
			for i := range ws {
				if err := tx.WorkspacePut(e.ctx, &ws[i]); err != nil {
					return err
				}
			}
			return nil
		})
	}
	group(t, "WorkspacePut", func(t *testing.T) {
		run(t, "RoundTripsAndReplacesTheAttemptsRow", open, func(t *testing.T, e *env) {
			e.add("m1")
			a1 := record(e, "m1", 1, "/w/m1/a1")
			a1.ReadOnly, a1.Notes = true, []string{"submodule lib is empty"}
			put(e, a1)
			a1.BaseCommit, a1.ReadOnly = "def", false
			a1.Notes = []string{"1 file tracked with Git LFS (big.bin) holds its pointer", "submodule lib is empty: \"quoted\", ünïcode"}
			put(e, a1)
			e.view(func(r engine.Reader) error {
				got, err := r.WorkspaceGet(e.ctx, "m1", 1)
				require.NoError(t, err)
				require.Equal(t, a1, got)
				return nil
			})
			a1.Notes = nil
			put(e, a1)
			e.view(func(r engine.Reader) error {
				got, err := r.WorkspaceGet(e.ctx, "m1", 1)
				require.NoError(t, err)
				require.Nil(t, got.Notes, "notes removed with the row's replacement")
				return nil
			})
		})
	})
	group(t, "WorkspaceGet", func(t *testing.T) {
		run(t, "NotFound", open, func(t *testing.T, e *env) {
			e.add("m1")
			put(e, record(e, "m1", 1, "/w/m1/a1"))
			e.view(func(r engine.Reader) error {
				_, err := r.WorkspaceGet(e.ctx, "m1", 2)
				require.ErrorIs(t, err, domain.ErrNotFound)
				_, err = r.WorkspaceGet(e.ctx, "m9", 1)
				require.ErrorIs(t, err, domain.ErrNotFound)
				return nil
			})
		})
	})
	group(t, "WorkspaceList", func(t *testing.T) {
		run(t, "InAttemptOrderOfOneMission", open, func(t *testing.T, e *env) {
			e.add("m1")
			e.add("m2")
			a2 := record(e, "m1", 2, "/w/m1/a1")
			a2.Resumed = true
			a1 := record(e, "m1", 1, "/w/m1/a1")
			other := record(e, "m2", 1, "/w/m2/a1")
			put(e, a2, other, a1)
			e.view(func(r engine.Reader) error {
				list, err := r.WorkspaceList(e.ctx, "m1")
				require.NoError(t, err)
				require.Equal(t, []engine.WorkspaceRecord{a1, a2}, list)
				none, err := r.WorkspaceList(e.ctx, "m9")
				require.NoError(t, err)
				require.Empty(t, none)
				return nil
			})
		})
	})
	group(t, "WorkspaceMarkRemoved", func(t *testing.T) {
		run(t, "RecordsWhenAndRefusesUnknown", open, func(t *testing.T, e *env) {
			e.add("m1")
			put(e, record(e, "m1", 1, "/w/m1/a1"))
			gone := t0.Add(time.Hour)
			e.update(func(tx engine.Tx) error { return tx.WorkspaceMarkRemoved(e.ctx, "m1", 1, gone) })
			err := e.s.Update(e.ctx, func(tx engine.Tx) error { return tx.WorkspaceMarkRemoved(e.ctx, "m1", 2, gone) })
			require.ErrorIs(t, err, domain.ErrNotFound)
			e.view(func(r engine.Reader) error {
				got, err := r.WorkspaceGet(e.ctx, "m1", 1)
				require.NoError(t, err)
				require.Equal(t, engine.WorkspaceRemoved, got.State)
				require.True(t, gone.Equal(got.RemovedAt), "removed at %v, want %v", got.RemovedAt, gone)
				return nil
			})
		})
	})
}

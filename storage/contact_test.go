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

// A database written by schema 1 gains the claim columns with their defaults: its missions
// read as never contacted and with no abandons, and nothing else changes.
func TestMigrate_ClaimColumnsOnASchema1Database(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "old.db")
	ms, err := migrations()
	require.NoError(t, err)
	db, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	_, err = db.ExecContext(ctx, ms[0].sql)
	require.NoError(t, err)
	_, err = db.ExecContext(ctx, `INSERT INTO missions (id, title, brief, repository, state, attempt, attempts_used, epoch,
  lease_owner, lease_expires_at, created_at, updated_at) VALUES ('msn_old', 'old', 'b', '/repo', 'running', 1, 1, 4, 'w', 5000, 1000, 2000)`)
	require.NoError(t, err)
	_, err = db.ExecContext(ctx, "PRAGMA user_version = 1")
	require.NoError(t, err)
	require.NoError(t, db.Close())

	s, err := Open(ctx, path, Options{})
	require.NoError(t, err)
	defer func() { require.NoError(t, s.Close()) }()
	var m domain.Mission
	require.NoError(t, s.View(ctx, func(r engine.Reader) error {
		m, err = r.MissionGet(ctx, "msn_old")
		return err
	}))
	require.Equal(t, domain.StateRunning, m.State)
	require.EqualValues(t, 4, m.Lease.Epoch)
	require.Equal(t, 1, m.AttemptsUsed)
	require.False(t, m.Contacted)
	require.Zero(t, m.Abandons)
}

// MissionRenew records contact only when asked and never clears it; an acquire clears it;
// MissionSet round-trips both columns.
func TestMissionRenew_RecordsContact(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openSeeded(t, 1)
	e := engine.New(s, engine.Options{DefaultRepository: "/repo"})
	m, err := e.Acquire(ctx, engine.AcquireRequest{AgentID: "w", Start: true})
	require.NoError(t, err)
	get := func() domain.Mission {
		var got domain.Mission
		require.NoError(t, s.View(ctx, func(r engine.Reader) error {
			got, err = r.MissionGet(ctx, m.ID)
			return err
		}))
		return got
	}
	renew := func(contact bool) {
		require.NoError(t, s.Update(ctx, func(tx engine.Tx) error {
			_, err := tx.MissionRenew(ctx, m.Fence(), time.Now().Add(time.Minute), contact)
			return err
		}))
	}
	require.False(t, get().Contacted)
	renew(false)
	require.False(t, get().Contacted, "a server renewal is not contact")
	renew(true)
	require.True(t, get().Contacted)
	renew(false)
	require.True(t, get().Contacted, "contact, once recorded, stays for the attempt")

	got := get()
	got.Abandons = 2
	require.NoError(t, s.Update(ctx, func(tx engine.Tx) error {
		return tx.MissionSet(ctx, engine.MissionChange{Row: &got, From: engine.Guard{State: got.State, Epoch: got.Lease.Epoch}, Set: engine.AllMissionFields})
	}))
	require.Equal(t, 2, get().Abandons)

	require.NoError(t, e.Release(ctx, m.Fence(), "test"))
	again, err := e.Acquire(ctx, engine.AcquireRequest{AgentID: "w2", Start: true})
	require.NoError(t, err)
	require.Equal(t, m.ID, again.ID)
	require.False(t, again.Contacted, "every acquire starts without contact")
}

package teststore

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
)

func TestOpen_UnknownBackendNamesTheVariable(t *testing.T) {
	t.Setenv(Env, "oracle")
	_, err := Open(context.Background(), Location(t))
	require.ErrorContains(t, err, Env+`="oracle"`)
	require.ErrorContains(t, err, `"sqlite"`)
}

func TestOpenAt_ReachesTheSameDatabaseAgain(t *testing.T) {
	t.Setenv(Env, "") // the default
	require.Equal(t, SQLite, Backend())
	loc := Location(t)
	ctx := context.Background()
	s, err := Open(ctx, loc)
	require.NoError(t, err)
	require.NoError(t, s.Update(ctx, func(tx engine.Tx) error { return tx.SetPaused(ctx, true) }))
	require.NoError(t, s.Close())
	again := OpenAt(t, loc)
	require.NoError(t, again.View(ctx, func(r engine.Reader) error {
		p, err := r.Paused(ctx)
		require.True(t, p, "the flag written before the reopen")
		return err
	}))
	fresh := New(t)
	require.NoError(t, fresh.View(ctx, func(r engine.Reader) error {
		p, err := r.Paused(ctx)
		require.False(t, p, "a new store is its own database")
		return err
	}))
}

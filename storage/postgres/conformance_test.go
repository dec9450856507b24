package postgres_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/storage/postgres"
	"github.com/mcp-scheduler/mcp-scheduler/storage/postgres/pgtest"
	"github.com/mcp-scheduler/mcp-scheduler/storage/storetest"
)

// openStore opens a Store on a fresh database of the test server, closed when t ends.
func openStore(t *testing.T) *postgres.Store {
	s, err := postgres.Open(context.Background(), pgtest.Database(t), postgres.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	return s
}

// TestConformance runs the Store seam's conformance suite, unchanged, on PostgreSQL: every
// case on a database of its own.
func TestConformance(t *testing.T) {
	storetest.Exercise(t, func(t *testing.T) engine.Store { return openStore(t) })
}

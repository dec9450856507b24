package postgres

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/mcp-scheduler/mcp-scheduler/e2e/testenv"
	"github.com/mcp-scheduler/mcp-scheduler/storage/postgres/pgtest"
)

// TestListen_SignalsCommitsAndSurvivesALostConnection: the listener signals after connecting,
// on another connection's committed Notify, and again after its connection was killed (it
// reconnects and listens again); the channel closes when ctx ends.
func TestListen_SignalsCommitsAndSurvivesALostConnection(t *testing.T) {
	ctx := testCtx(t)
	url := pgtest.Database(t)
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	lctx, stop := context.WithCancel(ctx)
	out := make(chan struct{}, 1)
	go Listen(lctx, url, out, quiet)
	wait(t, out, "the signal after connecting")

	commit := func() {
		t.Helper()
		if err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error { return Notify(ctx, tx) }); err != nil {
			t.Fatal(err)
		}
	}
	commit()
	wait(t, out, "the committed write's signal")

	old := listenerPID(t, ctx, pool, 0)
	var killed bool
	if err := pool.QueryRow(ctx, "SELECT pg_terminate_backend($1)", old).Scan(&killed); err != nil || !killed {
		t.Fatalf("killing the listener's connection %d: %v, %v", old, killed, err)
	}
	wait(t, out, "the signal after the lost connection")
	// Listening again: wait until the new connection is LISTENing, then a commit signals.
	listenerPID(t, ctx, pool, old)
	drain(out)
	commit()
	wait(t, out, "a commit's signal after reconnecting")

	stop()
	for open := true; open; {
		_, open = testenv.Receive(t, "the channel to close after ctx ended", out)
	}
}

// listenerPID waits until a connection other than backend pid not has run LISTEN on this
// database and is idle (waiting for notifications), and returns its backend pid.
func listenerPID(t *testing.T, ctx context.Context, pool *pgxpool.Pool, not int32) int32 {
	t.Helper()
	return testenv.WaitForValue(t, "a connection listening", func() (int32, bool) {
		var pid int32
		err := pool.QueryRow(ctx, `SELECT pid FROM pg_stat_activity
WHERE datname = current_database() AND query LIKE 'LISTEN %' AND state = 'idle' AND pid <> $1 LIMIT 1`, not).Scan(&pid)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			t.Fatal(err)
		}
		return pid, err == nil
	})
}

func drain(out chan struct{}) {
	select {
	case <-out:
	default:
	}
}

func wait(t *testing.T, out chan struct{}, what string) {
	t.Helper()
	testenv.Receive(t, "a signal: "+what, out)
}

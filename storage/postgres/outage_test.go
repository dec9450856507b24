package postgres

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/e2e/testenv"
	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/storage/postgres/pgtest"
)

// noop is a write transaction that changes nothing but still commits (and notifies).
func noop(engine.Tx) error { return nil }

// A server stopped mid-run and started again: meanwhile Update and View fail with an
// *UnavailableError naming the URL (never the password) that wraps ErrStoreUnavailable; once
// it is back the pool reconnects by itself, and the change feed listens again: a commit made
// after the restart (by another handle) still wakes the waiter.
func TestStore_ServerStoppedAndStartedAgain(t *testing.T) {
	ctx := testCtx(t)
	c := pgtest.Private(t, pgtest.ClusterOptions{Password: "s3cret-pw"})
	u := c.URL("postgres")
	st, err := Open(ctx, u, Options{Logger: quiet})
	require.NoError(t, err)
	defer st.Close()
	other, err := Open(ctx, u, Options{Logger: quiet})
	require.NoError(t, err)
	defer other.Close()
	changes := st.Changes(ctx, 0)
	waitRead(t, changes, "the signal after the listener connected")

	require.NoError(t, c.Halt(ctx))
	err = st.Update(ctx, noop)
	var ue *UnavailableError
	require.ErrorAs(t, err, &ue, "%v", err)
	require.ErrorIs(t, err, domain.ErrStoreUnavailable)
	require.Contains(t, err.Error(), "postgres:xxxxx@"+c.Addr())
	require.NotContains(t, err.Error(), "s3cret-pw")
	require.ErrorIs(t, st.View(ctx, func(engine.Reader) error { return nil }), domain.ErrStoreUnavailable)

	require.NoError(t, c.Resume(ctx))
	testenv.WaitFor(t, "the pool to reconnect", func() bool { return st.Update(ctx, noop) == nil })
	admin, err := pgxpool.New(ctx, u)
	require.NoError(t, err)
	defer admin.Close()
	listenerPID(t, ctx, admin, 0) // the listener LISTENs again
	drainRead(changes)
	require.NoError(t, other.Update(ctx, noop))
	waitRead(t, changes, "a commit's signal after the restart")
}

// Wrong credentials on a server that requires a password fail at once (no waiting) with an
// error that names the user, host and database and says the password was refused, and never
// shows either password.
func TestOpen_WrongPasswordIsRefusedWithoutShowingIt(t *testing.T) {
	ctx := testCtx(t)
	c := pgtest.Private(t, pgtest.ClusterOptions{Password: "right-pw-1"})
	start := time.Now()
	_, err := Open(ctx, c.URLWithPassword("postgres", "wrong-pw-2"), Options{Logger: quiet, ConnectWait: 10 * time.Minute})
	require.Error(t, err)
	msg := err.Error()
	require.Contains(t, msg, "refused the password")
	require.Contains(t, msg, `user "postgres" on 127.0.0.1`)
	require.Contains(t, msg, `database "postgres"`)
	require.NotContains(t, msg, "wrong-pw-2")
	require.NotContains(t, msg, "right-pw-1")
	require.Less(t, time.Since(start), 10*time.Minute, "refused credentials are not waited on")
	require.False(t, errors.Is(err, domain.ErrStoreUnavailable), "a refused password is not an outage: %v", err)
}

// A Pending store answers Update and View with an *UnavailableError that says when the wait
// ends while its server is down, then works once the server is up, without a new handle; its
// change feed starts then.
func TestPending_AnswersWhileTheServerIsDownThenWorks(t *testing.T) {
	ctx := testCtx(t)
	c := pgtest.Private(t, pgtest.ClusterOptions{})
	require.NoError(t, c.Halt(ctx))
	p := OpenPending(ctx, c.URL("postgres"), Options{Logger: quiet, ConnectWait: 10 * time.Minute})
	defer p.Close()
	changes := p.Changes(ctx, 0)
	testenv.WaitFor(t, "a try to have failed", func() bool {
		err := p.Update(ctx, noop)
		return err != nil && strings.Contains(err.Error(), "connection refused")
	})
	err := p.View(ctx, func(engine.Reader) error { return nil })
	require.ErrorIs(t, err, domain.ErrStoreUnavailable)
	require.Contains(t, err.Error(), "not reachable yet")
	require.Contains(t, err.Error(), "retrying until")
	require.Contains(t, err.Error(), "[storage] connect_wait")

	require.NoError(t, c.Resume(ctx))
	testenv.Receive(t, "the pending store to connect after the server came up", p.Ready())
	require.NoError(t, p.Update(ctx, noop))
	waitRead(t, changes, "the change feed's first signal")
}

// A Pending store whose wait runs out reports Open's error, from Wait and from Update.
func TestPending_GivesUpAfterConnectWait(t *testing.T) {
	ctx := testCtx(t)
	proxy := newLateProxy(t, "127.0.0.1:1") // never opened
	p := OpenPending(ctx, "postgres://sched:hunter2@"+proxy.addr+"/db", Options{Logger: quiet, ConnectWait: 500 * time.Millisecond})
	defer p.Close()
	_, err := p.Wait(ctx)
	require.ErrorContains(t, err, "not reachable after")
	require.NotContains(t, err.Error(), "hunter2")
	require.Equal(t, err, p.Update(ctx, noop))
	_, open := <-p.Changes(ctx, 0)
	require.False(t, open, "no change feed without a database")
}

// waitRead waits for a signal on a receive-only change channel.
func waitRead(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	_, ok := testenv.Receive(t, what, ch)
	require.True(t, ok, "the change channel closed while waiting for %s", what)
}

// drainRead empties a receive-only change channel.
func drainRead(ch <-chan struct{}) {
	for {
		select {
		case <-ch:
		default:
			return
		}
	}
}

package postgres

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/e2e/testenv"
	"github.com/mcp-scheduler/mcp-scheduler/storage/postgres/pgtest"
)

// lateProxy forwards connections on a loopback port to target, but only once open is called:
// before that nothing listens on the port, as when the database server is not up yet.
type lateProxy struct {
	addr   string
	target string
	mu     sync.Mutex
	ln     net.Listener
}

func newLateProxy(t *testing.T, target string) *lateProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &lateProxy{addr: ln.Addr().String(), target: target}
	require.NoError(t, ln.Close()) // the port is free again until open
	t.Cleanup(func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.ln != nil {
			_ = p.ln.Close()
		}
	})
	return p
}

func (p *lateProxy) open(t *testing.T) {
	ln, err := net.Listen("tcp", p.addr)
	require.NoError(t, err)
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.pipe(c)
		}
	}()
}

func (p *lateProxy) pipe(c net.Conn) {
	s, err := net.Dial("tcp", p.target)
	if err != nil {
		_ = c.Close()
		return
	}
	go func() { _, _ = io.Copy(s, c); _ = s.Close() }()
	_, _ = io.Copy(c, s)
	_ = c.Close()
}

// via returns u with its host replaced by addr.
func via(t *testing.T, u, addr string) string {
	p, err := url.Parse(u)
	require.NoError(t, err)
	p.Host = addr
	return p.String()
}

// A server that comes up after the store started opening is waited for: Open retries, logs
// why it waits, and succeeds once the server answers.
func TestOpen_WaitsForAServerThatComesUpLate(t *testing.T) {
	ctx := testCtx(t)
	u := pgtest.Database(t)
	pu, err := url.Parse(u)
	require.NoError(t, err)
	proxy := newLateProxy(t, pu.Host)
	logs := &testenv.SyncBuffer{}
	log := slog.New(slog.NewTextHandler(logs, nil))
	type opened struct {
		s   *Store
		err error
	}
	done := make(chan opened, 1)
	dsn := via(t, u, proxy.addr)
	go func() {
		s, err := Open(ctx, dsn, Options{Logger: log, ConnectWait: 10 * time.Minute})
		done <- opened{s, err}
	}()
	testenv.WaitFor(t, "Open to log that it waits for the server", func() bool {
		return strings.Contains(logs.String(), "database not reachable; retrying")
	})
	proxy.open(t)
	o, _ := testenv.Receive(t, "Open to return once the server answers", done)
	s, err := o.s, o.err
	require.NoError(t, err)
	require.NoError(t, s.Close())
	require.Contains(t, logs.String(), "database reachable")
}

// With nothing listening, Open gives up after ConnectWait with an error that says so and
// never shows the password.
func TestOpen_GivesUpAfterConnectWait(t *testing.T) {
	ctx := testCtx(t)
	proxy := newLateProxy(t, "127.0.0.1:1") // never opened
	_, err := Open(ctx, "postgres://sched:hunter2@"+proxy.addr+"/db", Options{ConnectWait: 700 * time.Millisecond})
	require.ErrorContains(t, err, "not reachable after")
	require.NotContains(t, err.Error(), "hunter2")
	require.Contains(t, err.Error(), "sched:xxxxx@")
}

// A failure that waiting cannot cure (here a database that does not exist) is returned at
// once, with no retry.
func TestOpen_MissingDatabaseFailsAtOnce(t *testing.T) {
	ctx := testCtx(t)
	u := pgtest.Database(t)
	p, err := url.Parse(u)
	require.NoError(t, err)
	p.Path = "/no_such_database_here"
	logs := &testenv.SyncBuffer{}
	_, err = Open(ctx, p.String(), Options{Logger: slog.New(slog.NewTextHandler(logs, nil)), ConnectWait: 10 * time.Minute})
	require.ErrorContains(t, err, "no_such_database_here")
	require.NotContains(t, logs.String(), "retrying")
}

// Every connection runs with idle_in_transaction_session_timeout (IdleInTransactionTimeout
// unless the URL sets one): a transaction left open by a client that went silent — a node cut
// off by a partition — is ended by the server, and the row lock it held is free again for
// the others. Without the setting the second UPDATE waits as long as the first transaction
// stays open.
func TestOpen_AnAbandonedTransactionDoesNotHoldItsLocks(t *testing.T) {
	ctx := t.Context()
	url := pgtest.Database(t)
	pool, err := connect(ctx, url, 0, slog.New(slog.DiscardHandler), nil)
	require.NoError(t, err)
	defer pool.Close()
	var got string
	require.NoError(t, pool.QueryRow(ctx, "SHOW idle_in_transaction_session_timeout").Scan(&got))
	require.Equal(t, IdleInTransactionTimeout, got)

	short, err := connect(ctx, url+"&idle_in_transaction_session_timeout=1s", 0, slog.New(slog.DiscardHandler), nil)
	require.NoError(t, err)
	defer short.Close()
	require.NoError(t, short.QueryRow(ctx, "SHOW idle_in_transaction_session_timeout").Scan(&got))
	require.Equal(t, "1s", got, "the URL's own value is kept")
	_, err = short.Exec(ctx, "CREATE TABLE lockme (id int PRIMARY KEY, v int); INSERT INTO lockme VALUES (1, 0)")
	require.NoError(t, err)
	tx, err := short.Begin(ctx) // the silent node: it locks the row, then says nothing more
	require.NoError(t, err)
	_, err = tx.Exec(ctx, "UPDATE lockme SET v = 1 WHERE id = 1")
	require.NoError(t, err)

	other, err := connect(ctx, url, 0, slog.New(slog.DiscardHandler), nil)
	require.NoError(t, err)
	defer other.Close()
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	_, err = other.Exec(wctx, "UPDATE lockme SET v = 2 WHERE id = 1")
	require.NoError(t, err, "the abandoned transaction's lock was released when the server ended it")
	require.Error(t, tx.Commit(ctx), "the abandoned transaction was ended by the server")
	require.NoError(t, other.QueryRow(ctx, "SELECT v FROM lockme WHERE id = 1").Scan(new(int)))
}

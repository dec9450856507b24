package postgres

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/cenkalti/backoff/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// DefaultConnectWait is how long Open waits for an unreachable server when Options.ConnectWait
// is 0.
const DefaultConnectWait = time.Minute

// IdleInTransactionTimeout is the idle_in_transaction_session_timeout every connection runs
// with unless the URL sets one (…?idle_in_transaction_session_timeout=30s). A node cut off
// from the server in the middle of a transaction (a network partition holds its connection
// open, neither closed nor answered) would otherwise keep that transaction's row locks for
// as long as the partition lasts: the leader's reaper would wait on the row of the very
// mission it must take over, and every acquire would skip it (SKIP LOCKED). The server ends
// such a session after this long and its locks go with it; the store's own transactions are
// milliseconds long, so no healthy one comes near it.
const IdleInTransactionTimeout = "10s"

// sessionDefaults sets the session parameters the store relies on, keeping what the URL
// gives.
func sessionDefaults(cfg *pgxpool.Config) {
	rp := cfg.ConnConfig.RuntimeParams
	if _, ok := rp["idle_in_transaction_session_timeout"]; !ok {
		rp["idle_in_transaction_session_timeout"] = IdleInTransactionTimeout
	}
}

// connect opens a pool on url and pings it, retrying while the server cannot be reached (down,
// starting up, out of connection slots) with capped exponential backoff for at most wait,
// logging each failure with its reason (wait ≤ 0: one try). Failures that waiting cannot cure
// (a malformed URL, wrong credentials, a database that does not exist) return at once. Error
// messages show the URL without its password. report, when set, is told each transient
// failure's reason (password hidden) before the next try.
func connect(ctx context.Context, url string, wait time.Duration, log *slog.Logger, report func(string)) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("postgres: %s is not a usable connection URL: %s", SafeURL(url), hidePassword(err.Error(), url))
	}
	sessionDefaults(cfg)
	b := backoff.NewExponentialBackOff()
	b.InitialInterval, b.MaxInterval = 250*time.Millisecond, 5*time.Second
	start, tries := time.Now(), 0
	op := func() (*pgxpool.Pool, error) {
		tries++
		pool, err := pgxpool.NewWithConfig(ctx, cfg)
		if err == nil {
			err = pool.Ping(ctx)
			if err != nil {
				pool.Close()
			}
		}
		if err == nil {
			if tries > 1 {
				log.Info("database reachable", "url", SafeURL(url), "tries", tries, "waited", time.Since(start).Round(time.Millisecond))
			}
			return pool, nil
		}
		msg := hidePassword(err.Error(), url)
		if !transient(err) {
			return nil, backoff.Permanent(fmt.Errorf("postgres: connect to %s: %s%s", SafeURL(url), refusal(err, cfg), msg))
		}
		if report != nil {
			report(msg)
		}
		log.Warn("database not reachable; retrying", "url", SafeURL(url), "err", msg, "tries", tries,
			"waited", time.Since(start).Round(time.Millisecond), "gives_up_after", wait)
		return nil, fmt.Errorf("postgres: %s not reachable after %s (%d tries; [storage] connect_wait is %s): %s", SafeURL(url),
			time.Since(start).Round(time.Second), tries, max(wait, 0), msg)
	}
	limit := backoff.WithMaxTries(1) // wait ≤ 0: one try
	if wait > 0 {
		limit = backoff.WithMaxElapsedTime(wait)
	}
	return backoff.Retry(ctx, op, backoff.WithBackOff(b), limit)
}

// transient reports whether a connection failure may pass by waiting: the server is down or
// unreachable (no PostgreSQL error at all), starting up or shutting down (57P03), or out of
// connection slots (53300). Wrong credentials (class 28) or a missing database (3D000) do not.
func transient(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code == "57P03" || pe.Code == "53300" || pe.Code == "57P01"
	}
	return !errors.Is(err, context.Canceled)
}

// refusal says in words what a refused connection means when the server refused the
// credentials (SQLSTATE 28P01, 28000) or knows no such database (3D000), naming the user,
// host and database but never the password; "" for anything else.
func refusal(err error, cfg *pgxpool.Config) string {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return ""
	}
	c := cfg.ConnConfig
	where := fmt.Sprintf("user %q on %s:%d, database %q", c.User, c.Host, c.Port, c.Database)
	switch pe.Code {
	case "28P01":
		return "the server refused the password of " + where + " (the password is not shown; fix it in [storage] url, $MCP_SCHEDULER_DATABASE_URL or ~/.pgpass): "
	case "28000":
		return "the server does not let " + where + " in (check the user and pg_hba.conf): "
	case "3D000":
		return "there is no database " + fmt.Sprintf("%q on %s:%d", c.Database, c.Host, c.Port) + " (create it: CREATE DATABASE …): "
	}
	return ""
}

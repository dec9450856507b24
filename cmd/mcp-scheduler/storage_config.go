package main

import (
	"context"
	"fmt"
	"net/url"
	"time"

	"github.com/mcp-scheduler/mcp-scheduler/agent"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/storage"
	"github.com/mcp-scheduler/mcp-scheduler/storage/postgres"
)

// StorageConfig chooses the database: the embedded SQLite file data_dir/mcp-scheduler.db
// (URL empty, the default), or a PostgreSQL server (URL "postgres://user:pass@host:5432/db?…",
// or $MCP_SCHEDULER_DATABASE_URL, which overrides the file) that several nodes may share
// (docs/configuration.md, [storage]).
type StorageConfig struct {
	URL string `toml:"url"`
	// ConnectWait is how long a process keeps retrying a PostgreSQL server it cannot reach at
	// start (down, starting up, out of connection slots) before it exits non-zero; default 1m.
	ConnectWait agent.Duration `toml:"connect_wait"`
}

// Backend names the configured database for messages: "sqlite" or "postgres".
func (s StorageConfig) Backend() string {
	if s.URL == "" {
		return "sqlite"
	}
	return "postgres"
}

// connectWait is ConnectWait for postgres.Options: 0s in the file means no wait (one try).
func (s StorageConfig) connectWait() time.Duration {
	if s.ConnectWait == 0 {
		return -1
	}
	return s.ConnectWait.D()
}

// describe says where the database is, for doctor: the SQLite file under dataDir, or
// "postgres <redacted URL>".
func (s StorageConfig) describe(dataDir string) string {
	if s.URL == "" {
		return sqliteFile(dataDir)
	}
	return "postgres " + postgres.SafeURL(s.URL)
}

// validate reports a URL that is not a postgres:// one, without echoing its password.
func (s StorageConfig) validate() []error {
	if s.ConnectWait < 0 {
		return []error{fmt.Errorf("storage.connect_wait: %v must not be negative (a Go duration such as \"1m\"; 0s: no wait)", s.ConnectWait.D())}
	}
	if s.URL == "" {
		return nil
	}
	u, err := url.Parse(s.URL)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") || u.Host == "" {
		return []error{fmt.Errorf("storage.url (or %s): %q is not a postgres://host/database URL; leave it empty for the embedded SQLite database in data_dir",
			EnvDatabaseURL, postgres.SafeURL(s.URL))}
	}
	return nil
}

// openStore opens the configured database, migrating it: SQLite in the data directory, or
// PostgreSQL at storage.url. A PostgreSQL store is logged with its redacted URL. With
// connectLater, a PostgreSQL store is returned at once, still connecting (a.pending).
func (a *app) openStore(ctx context.Context) (engine.Store, error) {
	log := a.log.With("component", "storage")
	if a.cfg.Storage.URL == "" {
		return storage.Open(ctx, sqliteFile(a.cfg.DataDir), storage.Options{Logger: log})
	}
	opt := postgres.Options{Logger: log, ConnectWait: a.cfg.Storage.connectWait()}
	if a.connectLater {
		a.pending = postgres.OpenPending(ctx, a.cfg.Storage.URL, opt)
		return a.pending, nil
	}
	st, err := postgres.Open(ctx, a.cfg.Storage.URL, opt)
	if err != nil {
		return nil, err
	}
	log.Info("database", "backend", "postgres", "url", postgres.SafeURL(a.cfg.Storage.URL))
	return st, nil
}

package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/mcp-scheduler/mcp-scheduler/tools/watch"
)

// sqliteFile is the SQLite store's file in a data dir.
func sqliteFile(dataDir string) string { return filepath.Join(dataDir, "mcp-scheduler.db") }

// watchStoreMissing is the refusal of a watch on a data dir without a store, in one place
// (a mistyped --data-dir must not make a new, empty store to watch).
func watchStoreMissing(dataDir string) error {
	return fmt.Errorf("no scheduler store at %s: check --data-dir / %s (a daemon, serve, go or demo --keep makes one); nothing was created",
		dataDir, EnvDataDir)
}

// checkWatchStore refuses (a usage mistake) a watch of a SQLite data dir that holds no store
// file, before anything is opened or created; a PostgreSQL store ([storage] url) is not
// checked here (opening it reports a server that cannot be reached).
func (a *app) checkWatchStore() error {
	if a.cfg.Storage.URL != "" {
		return nil
	}
	if _, err := os.Stat(sqliteFile(a.cfg.DataDir)); errors.Is(err, fs.ErrNotExist) {
		return usageError{watchStoreMissing(a.cfg.DataDir)}
	} else if err != nil {
		return fmt.Errorf("data dir: %w", err)
	}
	return nil
}

// goneStoreSource is a watch source that checks, before each snapshot, that the SQLite store
// file it watches is still there: an open SQLite file that is removed (the demo removes its
// data dir at its end) still reads, so without this the view would show its last snapshot
// silently. A gone store is a read error the view shows.
type goneStoreSource struct {
	watch.Source
	dataDir string
}

// Snapshot implements watch.Source.
func (s goneStoreSource) Snapshot(ctx context.Context) (watch.Snapshot, error) {
	if _, err := os.Stat(sqliteFile(s.dataDir)); errors.Is(err, fs.ErrNotExist) {
		return watch.Snapshot{}, fmt.Errorf("the scheduler store at %s was removed while watching (the demo removes its data dir when it ends): nothing more will show; q quits", s.dataDir)
	}
	return s.Source.Snapshot(ctx)
}

// watchedSource wraps src with the gone-store check when the store is SQLite.
func (a *app) watchedSource(src watch.Source) watch.Source {
	if a.cfg.Storage.URL != "" {
		return src
	}
	return goneStoreSource{Source: src, dataDir: a.cfg.DataDir}
}

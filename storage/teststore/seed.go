package teststore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/mcp-scheduler/mcp-scheduler/storage"
)

// migrated is the file of a freshly migrated SQLite database, made once per test process.
var migrated struct {
	once sync.Once
	data []byte
	err  error
}

// SeedSQLite writes a migrated, empty SQLite database at loc when nothing is there yet: a
// copy of one migrated once per test process. An existing database (a reopen, a helper
// process's store) is left alone.
func SeedSQLite(ctx context.Context, loc string) error {
	switch _, err := os.Stat(loc); {
	case err == nil:
		return nil
	case !errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("teststore: %w", err)
	}
	migrated.once.Do(func() { migrated.data, migrated.err = migrate(ctx) })
	if migrated.err != nil {
		return migrated.err
	}
	// O_EXCL: a concurrent opener of the same new location seeds it once.
	f, err := os.OpenFile(loc, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("teststore: seed %s: %w", loc, err)
	}
	if _, err := f.Write(migrated.data); err != nil {
		_ = f.Close()
		return fmt.Errorf("teststore: seed %s: %w", loc, err)
	}
	return f.Close()
}

// migrate creates a database with every migration applied, closes it and returns its file.
// Closing the last connection checkpoints the WAL into the file; a WAL left behind would mean
// the file alone is not the whole database, so it is an error.
func migrate(ctx context.Context) ([]byte, error) {
	dir, err := os.MkdirTemp("", "teststore-template-")
	if err != nil {
		return nil, fmt.Errorf("teststore: %w", err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "template.db")
	s, err := storage.Open(ctx, path, storage.Options{})
	if err != nil {
		return nil, fmt.Errorf("teststore: migrate the template: %w", err)
	}
	if err := s.Close(); err != nil {
		return nil, fmt.Errorf("teststore: close the template: %w", err)
	}
	if fi, err := os.Stat(path + "-wal"); err == nil && fi.Size() > 0 {
		return nil, fmt.Errorf("teststore: the template kept a %d-byte WAL after closing", fi.Size())
	}
	return os.ReadFile(path)
}

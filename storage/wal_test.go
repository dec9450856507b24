package storage

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/e2e/testenv"
	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	st, err := os.Stat(path)
	require.NoError(t, err)
	return st.Size()
}

// appendBig writes n events of size bytes each, one transaction each.
func appendBig(t *testing.T, s *Store, n, size int) {
	t.Helper()
	data := []byte(`"` + strings.Repeat("x", size) + `"`)
	for i := 0; i < n; i++ {
		require.NoError(t, s.Update(context.Background(), func(tx engine.Tx) error {
			return tx.EventAppend(context.Background(), &domain.Event{At: time.Now(), Type: "test.big", Data: data})
		}))
	}
}

// An outside reader (another connection holding a read snapshot) keeps SQLite from
// restarting the WAL, which grows past its limit; once the reader ends, the store brings the
// -wal file back under the limit by itself, with no further write, and the data is intact.
func TestWAL_TruncatedAfterOutsideReaderEnds(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := t.TempDir() + "/wal.db"
	const limit = 1 << 20
	var logs testenv.SyncBuffer
	s, err := Open(ctx, path, Options{WALLimit: limit, WALCheckEvery: 100 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	require.NoError(t, err)
	defer func() { require.NoError(t, s.Close()) }()
	appendBig(t, s, 1, 1000)

	outside, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)")
	require.NoError(t, err)
	defer outside.Close()
	reader, err := outside.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	require.NoError(t, err)
	var before int
	require.NoError(t, reader.QueryRow("SELECT count(*) FROM events").Scan(&before)) // the snapshot starts here

	const busy = "still read by another connection"
	checks := strings.Count(logs.String(), busy)
	appendBig(t, s, 24, 200_000) // ~5 MB of WAL frames the reader's snapshot predates
	testenv.WaitFor(t, "two WAL checks that found the WAL over its limit and in use", func() bool {
		return strings.Count(logs.String(), busy) >= checks+2
	})
	require.Greater(t, fileSize(t, walPath(path)), int64(4*limit), "the reader's snapshot keeps the WAL from restarting")
	var still int
	require.NoError(t, reader.QueryRow("SELECT count(*) FROM events").Scan(&still))
	require.Equal(t, before, still, "the outside reader still reads its snapshot")

	require.NoError(t, reader.Rollback())
	require.NoError(t, outside.Close())
	testenv.WaitForState(t, "the WAL back under its limit after the reader ended", func() bool { return fileSize(t, walPath(path)) <= limit },
		func() string { return fmt.Sprintf("the WAL is %d bytes", fileSize(t, walPath(path))) })
	var n int
	require.NoError(t, s.View(ctx, func(r engine.Reader) error {
		evs, err := r.EventList(ctx, engine.EventFilter{Limit: 100})
		n = len(evs)
		return err
	}))
	require.Equal(t, 25, n, "every event survived the checkpoint")
}

// Every connection of the store carries journal_size_limit, so a WAL that SQLite restarts is
// cut back to the limit at the next write too.
func TestWAL_JournalSizeLimitOnEveryConnection(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, err := Open(ctx, t.TempDir()+"/limit.db", Options{})
	require.NoError(t, err)
	defer func() { require.NoError(t, s.Close()) }()
	var r, w, v int64
	require.NoError(t, s.readDB.QueryRowContext(ctx, "PRAGMA journal_size_limit").Scan(&r))
	require.NoError(t, s.Update(ctx, func(tx engine.Tx) error {
		return tx.(*txn).q.queryRow(ctx, "PRAGMA journal_size_limit").Scan(&w)
	}))
	require.NoError(t, s.version.QueryRowContext(ctx, "PRAGMA journal_size_limit").Scan(&v))
	require.Equal(t, []int64{DefaultWALLimit, DefaultWALLimit, DefaultWALLimit}, []int64{r, w, v})
}

// The database and its -wal and -shm files are 0600 whatever the umask, also for a database
// whose file an older version left readable by others.
func TestWAL_CompanionFilesArePrivate(t *testing.T) {
	old := syscall.Umask(0o022) // the usual umask; not parallel: the umask is the process's
	defer syscall.Umask(old)
	ctx := context.Background()
	path := t.TempDir() + "/modes.db"
	check := func(when string) {
		s, err := Open(ctx, path, Options{})
		require.NoError(t, err)
		appendBig(t, s, 1, 100)
		for _, p := range []string{path, walPath(path), shmPath(path)} {
			st, err := os.Stat(p)
			require.NoError(t, err, p)
			require.Equal(t, os.FileMode(0o600), st.Mode().Perm(), fmt.Sprintf("%s: %s", when, p))
		}
		require.NoError(t, s.Close())
	}
	check("new database")
	require.NoError(t, os.Chmod(path, 0o644))
	check("a database left 0644")
}

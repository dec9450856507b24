package storage

import (
	"context"
	"database/sql"
	"fmt"
	"sync/atomic"
	"time"
)

// DefaultCheckpointEvery is how often the checkpointer copies committed WAL frames into the
// database file (Options.CheckpointEvery).
const DefaultCheckpointEvery = 200 * time.Millisecond

// Why the writer does not checkpoint. SQLite's auto-checkpoint runs inside the COMMIT that
// takes the WAL past 1,000 pages, on the committing connection, and a checkpoint fsyncs the
// WAL and the database file (synchronous=NORMAL fsyncs nowhere else): on this machine's disk
// that made one commit in about fifty take 16–21 ms, so one in-process wake-up in a hundred
// (BenchmarkWakeUpClaim's p99) waited 20 ms for someone else's fsync. The writer's connection
// therefore runs with wal_autocheckpoint=0, and this goroutine, on a connection of its own,
// runs PRAGMA wal_checkpoint(PASSIVE) every checkpointEvery when anything was committed
// since the last pass. PASSIVE never waits for readers or the writer: it copies what no
// reader still needs, and the next pass copies the rest. The WAL stays bounded by the same
// rules as before (journal_size_limit at the writer's next write once a checkpoint copied
// every frame, and the WAL keeper's TRUNCATE when a reader held it past the limit). Other
// processes' connections (the CLI) keep SQLite's auto-checkpoint.

// checkpointer is the background checkpoint of one Store.
type checkpointer struct {
	conn    *sql.Conn
	every   time.Duration
	commits atomic.Int64 // commits of this Store's writer, counted by noteCommit
	covered atomic.Int64 // the commit count the last successful pass started after
	quit    chan struct{}
	done    chan struct{}
	log     func(msg string, args ...any)
}

// noteCommit counts a commit of the writer (after each batch).
func (c *checkpointer) noteCommit() { c.commits.Add(1) }

func (c *checkpointer) run() {
	defer close(c.done)
	t := time.NewTicker(c.every)
	defer t.Stop()
	for {
		select {
		case <-c.quit:
			return
		case <-t.C:
			n := c.commits.Load()
			if n == c.covered.Load() {
				continue
			}
			if err := c.once(context.Background()); err != nil {
				c.log("WAL checkpoint", "err", err)
				continue // tried again at the next tick
			}
			c.covered.Store(n)
		}
	}
}

// once copies what it can of the WAL into the database file without waiting for anyone.
func (c *checkpointer) once(ctx context.Context) error {
	var busy, frames, copied int
	if err := c.conn.QueryRowContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &frames, &copied); err != nil {
		return fmt.Errorf("wal_checkpoint(PASSIVE): %w", err)
	}
	return nil
}

// stop ends the goroutine and waits for it.
func (c *checkpointer) stop() {
	close(c.quit)
	<-c.done
}

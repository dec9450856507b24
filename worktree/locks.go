package worktree

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"github.com/gofrs/flock"
)

// lockTable serialises work per key: first an in-process mutex (a one-slot channel, so waiting
// honours the context), then an exclusive flock(2) on DataDir/locks/<key>.lock so other
// processes sharing the data directory exclude us too. The in-process step matters because
// flock locks belong to open file descriptions: two goroutines of one process must not rely
// on the file lock alone.
type lockTable struct {
	dir string
	mu  sync.Mutex
	m   map[string]chan struct{}
}

func newLockTable(dir string) *lockTable {
	return &lockTable{dir: dir, m: make(map[string]chan struct{})}
}

// flockRetry is how often a blocked file lock is retried.
const flockRetry = 5 * time.Millisecond

// acquire blocks until the key is held or ctx ends. The returned function releases it.
func (t *lockTable) acquire(ctx context.Context, key string) (func(), error) {
	ch := t.slot(key)
	select {
	case ch <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("lock %s: %w", key, ctx.Err())
	}
	fl := flock.New(filepath.Join(t.dir, key+".lock"), flock.SetPermissions(0o600))
	ok, err := fl.TryLockContext(ctx, flockRetry)
	if err != nil || !ok {
		<-ch
		if err == nil {
			err = ctx.Err()
		}
		return nil, fmt.Errorf("lock %s: %w", key, err)
	}
	return func() {
		_ = fl.Unlock() // closes the descriptor; the kernel drops the lock with it
		<-ch
	}, nil
}

func (t *lockTable) slot(key string) chan struct{} {
	t.mu.Lock()
	defer t.mu.Unlock()
	ch, ok := t.m[key]
	if !ok {
		ch = make(chan struct{}, 1)
		t.m[key] = ch
	}
	return ch
}

// structureKey names the lock that serialises structural changes of one repository
// (worktree add/move/remove/prune, branch creation and deletion).
func structureKey(repoID string) string { return "repo-" + repoID }

// fetchKey names the lock that serialises the fetches of a remote repository's target
// branches and the moves of their mirrors after a push.
func fetchKey(repoID string) string { return "fetch-" + repoID }

// landKey names the lock that serialises landings onto one target branch of one repository.
// The branch name is hashed so the file name stays flat and portable.
func landKey(repoID, branch string) string {
	sum := sha256.Sum256([]byte(branch))
	return "land-" + repoID + "-" + hex.EncodeToString(sum[:8])
}

package worktree

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// The warm pool: per repository, up to Config.WarmPool detached worktrees under
// DataDir/worktrees/<repo id>/.pool (".pool" can never be a mission id). Prepare claims one
// by `git worktree move` to the attempt's path and `git switch -c <branch> <base>`, which only
// rewrites the files that differ from the pooled commit; a background refill replaces it.

// poolDir is where a repository's warm worktrees live.
func (m *Manager) poolDir(r *Repo) string { return filepath.Join(m.root, r.id, ".pool") }

// readyMark marks a pool entry whose creation completed.
func readyMark(entry string) string { return entry + ".ready" }

// FillPool creates warm worktrees for r until Config.WarmPool exist, each detached at the tip
// of the repository's default branch (or its HEAD commit when detached). It holds the
// structural lock for one creation at a time, so Prepare is never delayed by more than one.
// Incomplete entries (an interrupted creation) are removed. A no-op when the pool is off.
func (m *Manager) FillPool(ctx context.Context, r *Repo) error {
	if err := m.checkOpen(); err != nil {
		return err
	}
	for {
		done := false
		err := m.withStructure(ctx, r, func() error {
			ready, err := m.poolEntries(ctx, r)
			if err != nil {
				return err
			}
			if len(ready) >= m.cfg.WarmPool {
				done = true
				return nil
			}
			return m.addPoolEntry(ctx, r)
		})
		if err != nil {
			return fmt.Errorf("fill warm pool of %s: %w", r.root, err)
		}
		if done {
			return nil
		}
	}
}

// poolEntries lists ready entries and removes incomplete ones. The structural lock is held.
func (m *Manager) poolEntries(ctx context.Context, r *Repo) ([]string, error) {
	dir := m.poolDir(r)
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", dir, err)
	}
	var ready []string
	for _, e := range entries {
		name := e.Name()
		if !e.IsDir() || strings.HasPrefix(name, ".") {
			continue
		}
		p := filepath.Join(dir, name)
		if _, err := os.Stat(readyMark(p)); err == nil {
			ready = append(ready, p)
			continue
		}
		if err := m.discard(ctx, r, p, "", false); err != nil {
			return nil, err
		}
	}
	for _, e := range entries { // marks without an entry
		if p, ok := strings.CutSuffix(filepath.Join(dir, e.Name()), ".ready"); ok {
			if _, err := os.Stat(p); err != nil {
				_ = os.Remove(filepath.Join(dir, e.Name()))
			}
		}
	}
	return ready, nil
}

func (m *Manager) addPoolEntry(ctx context.Context, r *Repo) error {
	var commit string
	if branch, err := r.DefaultBranch(); err == nil {
		tip, err := r.branchTip(branch)
		if err != nil {
			return err
		}
		commit = tip.String()
	} else {
		ws := Workspace{Path: r.root}
		head, err := m.headOf(ctx, r, ws)
		if err != nil {
			return err
		}
		commit = head.commit
	}
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	p := filepath.Join(m.poolDir(r), "w-"+hex.EncodeToString(rnd[:]))
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return err
	}
	if _, err := m.git.run(ctx, r.root, runOpts{pointers: true}, "worktree", "add", "--detach", "--end-of-options", p, commit); err != nil {
		return errors.Join(err, m.discard(ctx, r, p, "", false))
	}
	return os.WriteFile(readyMark(p), nil, 0o600)
}

// claimFromPool moves a ready pool entry to ws.Path and switches it to a new branch at
// ws.BaseCommit. It reports false (and cleans up) when the pool is off or empty, when the
// branch already exists, or when the claim failed, so the caller creates the worktree the
// normal way. The structural lock is held.
func (m *Manager) claimFromPool(ctx context.Context, r *Repo, ws *Workspace) (bool, error) {
	if m.cfg.WarmPool == 0 || r.hasBranch(ws.Branch) {
		return false, nil // an existing branch (a leftover, or checked out elsewhere) goes the careful way
	}
	defer m.startFill(r)
	ready, err := m.poolEntries(ctx, r)
	if err != nil || len(ready) == 0 {
		return false, err
	}
	entry := ready[0]
	_ = os.Remove(readyMark(entry))
	if err := os.MkdirAll(filepath.Dir(ws.Path), 0o700); err != nil {
		return false, err
	}
	if _, err := m.git.run(ctx, r.root, runOpts{}, "worktree", "move", "--end-of-options", entry, ws.Path); err != nil {
		m.log.Warn("warm pool: move failed", "path", entry, "err", err)
		return false, m.discard(ctx, r, entry, "", false)
	}
	if _, err := m.git.run(ctx, ws.Path, runOpts{pointers: true}, "switch", "-q", "--no-guess", "-c", ws.Branch, "--end-of-options", ws.BaseCommit); err != nil {
		m.log.Warn("warm pool: switch failed", "path", ws.Path, "err", err)
		return false, m.discard(ctx, r, ws.Path, ws.Branch, true)
	}
	ws.FromPool = true
	return true, nil
}

// startFill refills r's pool in the background (one goroutine per repository; a request
// arriving while one runs makes it go round again). Close stops and waits for it.
func (m *Manager) startFill(r *Repo) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed || m.cfg.WarmPool == 0 {
		return
	}
	if _, running := m.filling[r.id]; running {
		m.filling[r.id] = true // go round again
		return
	}
	m.filling[r.id] = false
	m.bg.Add(1)
	go func() {
		defer m.bg.Done()
		for {
			if err := m.FillPool(m.bgCtx, r); err != nil && m.bgCtx.Err() == nil {
				m.log.Warn("warm pool refill failed", "repo_id", r.id, "err", err)
			}
			m.mu.Lock()
			again := m.filling[r.id] && m.bgCtx.Err() == nil
			if !again {
				delete(m.filling, r.id)
			} else {
				m.filling[r.id] = false
			}
			m.mu.Unlock()
			if !again {
				return
			}
		}
	}()
}

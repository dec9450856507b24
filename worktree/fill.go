package worktree

import (
	"context"
	"fmt"
)

// fill completes a checkout git just made with LFS files as pointers and submodules empty:
// the content of the LFS objects the repository's local store holds (lfs.go), and the
// submodules its module store can give (submodules.go). It sets ws.Notes to what the agent
// must know about what is still missing, and ws.GitConfig to the settings its own git needs.
// Nothing is fetched from any network; what cannot be filled is said, never an error.
func (m *Manager) fill(ctx context.Context, r *Repo, ws *Workspace) error {
	store := ""
	if ws.Strategy == StrategyIsolatedCopy {
		store = m.lfsStore(ctx, r) // a clone has its own, empty, store
	}
	lfsNotes, cfg, err := m.lfsFill(ctx, ws.Path, store)
	if err != nil {
		return fmt.Errorf("fill %s: %w", ws.Path, err)
	}
	modNotes, err := m.moduleFill(ctx, ws.Path, r.commonDir, 0)
	if err != nil {
		return fmt.Errorf("fill %s: %w", ws.Path, err)
	}
	ws.Notes, ws.GitConfig = append(lfsNotes, modNotes...), cfg
	return nil
}

// fillChecks fills the checkout the landing checks run in like a workspace, so the checks
// see what an agent saw; its notes are only logged.
func (m *Manager) fillChecks(ctx context.Context, r *Repo, dir string) error {
	ws := Workspace{Path: dir, Strategy: StrategySnapshot}
	if err := m.fill(ctx, r, &ws); err != nil {
		return err
	}
	for _, n := range ws.Notes {
		m.log.Debug("checks checkout", "path", dir, "note", n)
	}
	return nil
}

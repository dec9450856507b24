package worktree

import (
	"context"
	"fmt"
)

// RemoveOptions tunes Remove.
type RemoveOptions struct {
	// DeleteBranch also deletes the workspace's branch. Commits reachable only from it become
	// unreachable (git gc collects them eventually).
	DeleteBranch bool
	// Force removes a workspace with uncommitted changes; without it Remove fails with
	// ErrWorkspaceDirty and changes nothing.
	Force bool
}

// Remove deletes one workspace: its checkout, its registration and its record, and its
// branch when asked. A directory already deleted by hand is fine (the registration is pruned).
// The main checkout is refused (ErrReadOnlyWorkspace); so is a path outside the data
// directory (ErrPathEscapes) and one replaced by a symbolic link (ErrWorkspaceSymlink: the
// link and what it points at are left alone). An untracked symbolic link in the workspace
// that points outside the repository is not uncommitted work; removing the workspace removes
// the link, never what it points at.
func (m *Manager) Remove(ctx context.Context, ws Workspace, opts RemoveOptions) error {
	if err := m.checkOpen(); err != nil {
		return err
	}
	path, err := m.ownedPath(ws)
	if err != nil {
		return fmt.Errorf("remove workspace: %w", err)
	}
	r, err := m.repoByID(ws.RepoID)
	if err != nil {
		return fmt.Errorf("remove workspace %s: %w", path, err)
	}
	err = m.withStructure(ctx, r, func() error {
		if err := refuseLinked(path); err != nil {
			return err
		}
		if _, err := gitDirOf(path); err == nil && !opts.Force && ws.Strategy != StrategySnapshot {
			why, err := m.uncommittedWork(ctx, path)
			if err != nil {
				return err
			}
			if why.reason == "case_collision" {
				return fmt.Errorf("%w: %s", ErrWorkspaceDirty, why.detail)
			}
			if why.reason != "" {
				return ErrWorkspaceDirty
			}
		}
		return m.discard(ctx, r, path, ws.Branch, opts.DeleteBranch)
	})
	if err != nil {
		return fmt.Errorf("remove workspace %s: %w", path, err)
	}
	return nil
}

// repoByID finds an opened repository by id, else opens the one recorded in repo.json.
func (m *Manager) repoByID(id string) (*Repo, error) {
	m.mu.Lock()
	for _, r := range m.repos {
		if r.id == id {
			m.mu.Unlock()
			return r, nil
		}
	}
	m.mu.Unlock()
	roots, err := m.KnownRepositories()
	if err != nil {
		return nil, err
	}
	for _, root := range roots {
		if r, err := m.Open(root); err == nil && r.id == id {
			return r, nil
		}
	}
	return nil, fmt.Errorf("%w: repository %s is unknown to this data directory", ErrWorkspaceGone, id)
}

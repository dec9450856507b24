package worktree

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
)

// An isolated copy is a local clone (`git clone --local`: objects hard-linked when the data
// directory shares the repository's file system, copied otherwise) whose git data lives inside
// the workspace, for agents sandboxed to their directory. Its branch also exists in the
// repository (created at the base), and landing fetches the clone's branch back first.

// createIsolated clones the repository to ws.Path on ws.Branch at ws.BaseCommit and records
// the branch in the repository.
func (m *Manager) createIsolated(ctx context.Context, r *Repo, ws *Workspace) error {
	if err := m.cloneAt(ctx, r, ws.Path, ws.Branch, ws.BaseCommit); err != nil {
		return err
	}
	_, err := m.git.run(ctx, r.root, runOpts{}, "update-ref", "-m", "mcp-scheduler: isolated copy",
		"--end-of-options", "refs/heads/"+ws.Branch, ws.BaseCommit)
	return err
}

// cloneAt clones the repository to path and checks out a new branch at commit there, with
// the sparse-checkout of the person's checkout (inheritSparse).
func (m *Manager) cloneAt(ctx context.Context, r *Repo, path, branch, commit string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	if _, err := m.git.run(ctx, r.root, runOpts{allowFile: true}, "clone", "--local", "--no-checkout",
		"--quiet", "--end-of-options", r.root, path); err != nil {
		return fmt.Errorf("clone isolated copy: %w", err)
	}
	if err := m.inheritSparse(ctx, r, path); err != nil {
		return err
	}
	if _, err := m.git.run(ctx, path, runOpts{pointers: true}, "switch", "-q", "--no-guess", "-C", branch,
		"--end-of-options", commit); err != nil {
		return fmt.Errorf("check out isolated copy: %w", err)
	}
	return ensureExclude(filepath.Join(path, ".git"))
}

// fetchIsolated brings an isolated copy's branch into the repository (forced: the branch is
// the attempt's own), and the LFS objects its store has that the repository's lacks. The
// land lock is held.
func (m *Manager) fetchIsolated(ctx context.Context, r *Repo, ws Workspace) error {
	// The LFS objects of files the agent changed are in the copy's own store: the landed
	// pointers must find them in the repository's after the copy is gone.
	if err := carryLFSObjects(filepath.Join(ws.Path, ".git", "lfs"), m.lfsStore(ctx, r)); err != nil {
		return err
	}
	spec := "+refs/heads/" + ws.Branch + ":refs/heads/" + ws.Branch
	return m.gitLocks.retry(ctx, func() error {
		_, err := m.git.run(ctx, r.root, runOpts{allowFile: true}, "fetch", "--quiet", "--no-tags",
			"--no-write-fetch-head", "--end-of-options", ws.Path, spec)
		if err != nil {
			return fmt.Errorf("fetch isolated copy %s: %w", ws.Path, err)
		}
		return nil
	})
}

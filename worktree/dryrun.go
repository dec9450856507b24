package worktree

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"

	git "github.com/go-git/go-git/v5"
)

// PrepareCheck is what CheckPrepare did in a repository.
type PrepareCheck struct {
	// Root is the repository's top level.
	Root string `json:"root"`
	// Branch is the default branch the throwaway workspace was made on the tip of; "" when
	// HEAD is detached (missions must then name a target branch, and a snapshot of HEAD was
	// made instead).
	Branch string `json:"branch,omitempty"`
	// Commit is the commit the workspace held.
	Commit string `json:"commit"`
	// PushHookNote says why people's pushes into the checkout are not serialised with
	// landings (Repo.PushHookNote); "" when they are.
	PushHookNote string `json:"push_hook_note,omitempty"`
}

// CheckPrepare proves that a mission's first dispatch can get a workspace in the repository
// at path: it opens the repository as the scheduler does (go-git included, so an extension it
// cannot read shows here as ErrUnsupportedExtension), makes a throwaway workspace with Prepare
// (a worktree on a branch from the default branch's tip, named mcp-scheduler/doctor-<random>/a1;
// with HEAD detached a snapshot of HEAD) and removes it with its branch. The error is Open's,
// Prepare's or Remove's, as a mission would meet it.
func (m *Manager) CheckPrepare(ctx context.Context, path string) (PrepareCheck, error) {
	r, err := m.Open(path)
	if err != nil {
		return PrepareCheck{}, err
	}
	var id [6]byte
	if _, err := rand.Read(id[:]); err != nil {
		return PrepareCheck{}, err
	}
	req := PrepareRequest{Repo: r, MissionID: "doctor-" + hex.EncodeToString(id[:]), Attempt: 1}
	pc := PrepareCheck{Root: r.root, Branch: r.defaultBranch, PushHookNote: r.PushHookNote()}
	if pc.Branch == "" {
		req.Strategy = StrategySnapshot
		if req.SnapshotCommit, err = r.headCommit(); err != nil {
			return pc, err
		}
	}
	ws, err := m.Prepare(ctx, req)
	if err != nil {
		return pc, err
	}
	pc.Commit = ws.BaseCommit
	if err := m.Remove(ctx, ws, RemoveOptions{Force: true, DeleteBranch: true}); err != nil {
		return pc, fmt.Errorf("the throwaway workspace was made but not removed: %w", err)
	}
	return pc, nil
}

// headCommit is the commit HEAD points at.
func (r *Repo) headCommit() (string, error) {
	var commit string
	err := r.read(func(gg *git.Repository) error {
		head, err := gg.Head()
		if err != nil {
			return errors.Join(ErrUnknownRef, err)
		}
		commit = head.Hash().String()
		return nil
	})
	return commit, err
}

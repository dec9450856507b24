package worktree

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Sparse checkouts (bug case B66): workspaces have the sparse-checkout of the person's
// checkout, so a workspace of a monorepo whose person works in a cone holds that cone, not
// the whole tree. A linked worktree gets it from git itself: since git 2.36 `git worktree add`
// copies the sparse-checkout patterns and core.sparseCheckout / core.sparseCheckoutCone of
// the worktree it runs in, and every `worktree add` of this package runs in the person's
// checkout (workspaces, snapshots, the warm pool, the checks' checkout). An isolated copy is a
// clone, which git gives the whole tree: inheritSparse copies the same three things into it
// before its first checkout.

// inheritSparse gives the clone at path (not checked out yet) the sparse-checkout of the
// person's checkout r.root, as `git worktree add` does for a linked worktree. Nothing happens
// when that checkout is not sparse.
func (m *Manager) inheritSparse(ctx context.Context, r *Repo, path string) error {
	out, err := m.git.run(ctx, r.root, runOpts{readOnly: true}, "config", "--type=bool", "--get-regexp", `^core\.sparsecheckout(cone)?$`)
	if exitCode(err) == 1 {
		return nil // neither is set
	}
	if err != nil {
		return fmt.Errorf("read the sparse-checkout settings of %s: %w", r.root, err)
	}
	set := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if k, v, ok := strings.Cut(line, " "); ok {
			set[k] = v
		}
	}
	if set["core.sparsecheckout"] != "true" {
		return nil
	}
	gitDir, err := gitDirOf(r.root)
	if err != nil {
		return err
	}
	patterns, err := os.ReadFile(filepath.Join(gitDir, "info", "sparse-checkout"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("read the sparse-checkout patterns of %s: %w", r.root, err)
	}
	info := filepath.Join(path, ".git", "info")
	if err := os.MkdirAll(info, 0o700); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(info, "sparse-checkout"), patterns, 0o600); err != nil {
		return err
	}
	cone := set["core.sparsecheckoutcone"]
	if cone == "" {
		cone = "false"
	}
	for _, kv := range [][2]string{{"core.sparseCheckout", "true"}, {"core.sparseCheckoutCone", cone}} {
		if _, err := m.git.run(ctx, path, runOpts{}, "config", kv[0], kv[1]); err != nil {
			return fmt.Errorf("make the isolated copy sparse: %w", err)
		}
	}
	return nil
}

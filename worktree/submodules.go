package worktree

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
)

// Submodules (docs/workspaces.md, "Submodules"). `git worktree add` leaves a submodule's
// directory empty. The scheduler fetches nothing from a submodule's URL; it populates the
// directory from the repository's own module store, <common dir>/modules/<name> (what
// `git submodule update --init` made in the person's checkout), when that store holds the
// commit the superproject records: `git clone --local --no-checkout` of the store into the
// directory (objects hard-linked, nothing written into the store), then a detached checkout
// of the recorded commit. Nested submodules are populated the same way from the store's own
// modules/ directory. A submodule that cannot be populated stays empty and the workspace's
// notes say which and why, for the agent's brief and get_mission.

// maxModuleDepth bounds how deep nested submodules are populated.
const maxModuleDepth = 8

// gitlink is a submodule entry of an index: the commit the superproject records at a path.
type gitlink struct {
	path   string
	commit string
}

// moduleFill populates the submodules of the checkout dir from the module store under
// gitDir (the superproject's common dir, or a submodule's store for nested ones) and returns
// the notes for the agent: one per submodule left empty, one per populated.
func (m *Manager) moduleFill(ctx context.Context, dir, gitDir string, depth int) ([]string, error) {
	links, err := m.gitlinks(ctx, dir)
	if err != nil || len(links) == 0 {
		return nil, err
	}
	names, err := m.moduleNames(ctx, dir)
	if err != nil {
		return nil, err
	}
	var notes []string
	for _, l := range links {
		name, ok := names[l.path]
		if !ok {
			notes = append(notes, fmt.Sprintf("submodule %s is empty: .gitmodules has no entry for its path, so there is no module store to fill it from", l.path))
			continue
		}
		n, err := m.fillModule(ctx, dir, gitDir, name, l, depth)
		if err != nil {
			return nil, err
		}
		notes = append(notes, n...)
	}
	return notes, nil
}

// fillModule populates one submodule; a reason it could not becomes a note, and only a
// failure to leave its directory empty again is an error.
func (m *Manager) fillModule(ctx context.Context, dir, gitDir, name string, l gitlink, depth int) ([]string, error) {
	target, err := underRoot(dir, filepath.Join(dir, l.path))
	if err != nil {
		return nil, err
	}
	store := filepath.Join(gitDir, "modules", name)
	if bad := badModuleName(name); bad != "" {
		return []string{fmt.Sprintf("submodule %s is empty: its name %q %s", l.path, name, bad)}, nil
	}
	if fi, err := os.Stat(filepath.Join(store, "objects")); err != nil || !fi.IsDir() {
		return []string{fmt.Sprintf("submodule %s is empty: the repository has no local copy of it (no module store %s) and the scheduler fetches nothing; "+
			"`git submodule update --init %s` in the repository makes one for later workspaces", l.path, store, l.path)}, nil
	}
	if _, err := m.git.run(ctx, store, runOpts{readOnly: true}, "cat-file", "-e", l.commit+"^{commit}"); err != nil {
		return []string{fmt.Sprintf("submodule %s is empty: its module store %s lacks the recorded commit %s and the scheduler fetches nothing; "+
			"`git submodule update %s` in the repository fetches it", l.path, store, l.commit, l.path)}, nil
	}
	if err := m.cloneModule(ctx, store, target, l.commit); err != nil {
		m.log.Warn("submodule not populated", "path", target, "err", err)
		if cerr := emptyDir(target); cerr != nil {
			return nil, errors.Join(err, cerr)
		}
		return []string{fmt.Sprintf("submodule %s is empty: populating it from %s failed: %s", l.path, store, firstLine(stderrOf(err)))}, nil
	}
	notes := []string{fmt.Sprintf("submodule %s is checked out at its recorded commit %s (a clone of the repository's module store, detached HEAD); "+
		"to change what the superproject records, move its HEAD and commit its path here: a commit made inside it is landed only as that pointer, "+
		"its objects stay in this workspace", l.path, l.commit[:12])}
	if depth+1 < maxModuleDepth {
		nested, err := m.moduleFill(ctx, target, store, depth+1)
		if err != nil {
			return nil, err
		}
		notes = append(notes, prefixed(l.path+"/", nested)...)
	}
	return notes, nil
}

// cloneModule makes target (an empty directory, or a populated submodule) a checkout of
// commit from store.
func (m *Manager) cloneModule(ctx context.Context, store, target, commit string) error {
	if _, err := gitDirOf(target); err != nil {
		if err := os.MkdirAll(target, 0o755); err != nil {
			return err
		}
		if _, err := m.git.run(ctx, target, runOpts{allowFile: true}, "clone", "--local", "--no-checkout",
			"--quiet", "--end-of-options", store, target); err != nil {
			return err
		}
	}
	// A full commit id from the index, never a name: checkout takes no --end-of-options here.
	_, err := m.git.run(ctx, target, runOpts{pointers: true}, "checkout", "--quiet", "--detach", commit)
	return err
}

// gitlinks lists the submodule entries (mode 160000, stage 0) of dir's index that are
// checked out (not skip-worktree: outside a sparse checkout nothing is populated).
func (m *Manager) gitlinks(ctx context.Context, dir string) ([]gitlink, error) {
	out, err := m.git.run(ctx, dir, runOpts{readOnly: true}, "ls-files", "-t", "--stage", "-z")
	if err != nil {
		return nil, fmt.Errorf("list submodules in %s: %w", dir, err)
	}
	var links []gitlink
	for _, rec := range splitZ(out) {
		meta, path, ok := strings.Cut(rec, "\t")
		f := strings.Fields(meta)
		if !ok || len(f) != 4 || f[0] == "S" || f[1] != "160000" || f[3] != "0" || !plumbing.IsHash(f[2]) {
			continue
		}
		links = append(links, gitlink{path: path, commit: f[2]})
	}
	return links, nil
}

// moduleNames maps submodule paths to their names from dir's .gitmodules.
func (m *Manager) moduleNames(ctx context.Context, dir string) (map[string]string, error) {
	names := map[string]string{}
	if _, err := os.Lstat(filepath.Join(dir, ".gitmodules")); err != nil {
		return names, nil
	}
	out, err := m.git.run(ctx, dir, runOpts{readOnly: true}, "config", "-z", "--file", ".gitmodules",
		"--get-regexp", `^submodule\..*\.path$`)
	if exitCode(err) == 1 {
		return names, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read .gitmodules in %s: %w", dir, err)
	}
	for _, rec := range splitZ(out) {
		key, path, ok := strings.Cut(rec, "\n")
		if !ok {
			continue
		}
		name := strings.TrimSuffix(strings.TrimPrefix(key, "submodule."), ".path")
		names[filepath.ToSlash(filepath.Clean(path))] = name
	}
	return names, nil
}

// badModuleName says why git would refuse name as a module store's directory (git's own
// check_submodule_name: no empty name, no ".." component), or "".
func badModuleName(name string) string {
	if name == "" || filepath.IsAbs(name) {
		return "is not a relative name"
	}
	for _, c := range strings.FieldsFunc(name, func(r rune) bool { return r == '/' || r == '\\' }) {
		if c == ".." {
			return "has a .. component, which git refuses"
		}
	}
	return ""
}

// emptyDir removes everything inside dir, leaving it empty (a submodule not populated).
func emptyDir(dir string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return os.MkdirAll(dir, 0o755)
	}
	if err != nil {
		return err
	}
	for _, e := range entries {
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			return err
		}
	}
	return nil
}

// prefixed returns notes with "submodule " followed by prefix in place of "submodule ".
func prefixed(prefix string, notes []string) []string {
	out := make([]string, len(notes))
	for i, n := range notes {
		out[i] = strings.Replace(n, "submodule ", "submodule "+prefix, 1)
	}
	return out
}

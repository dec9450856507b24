package worktree

import (
	"context"
	"fmt"
	"sort"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/utils/merkletrie"
)

// FileAction says what happened to a file between two commits.
type FileAction string

// File actions.
const (
	FileAdded    FileAction = "added"    // the path is new
	FileDeleted  FileAction = "deleted"  // the path is gone
	FileModified FileAction = "modified" // content or mode changed
	FileRenamed  FileAction = "renamed"  // moved from OldPath (with or without edits)
)

// FileChange is one changed file. Path is the new path (the old one for deletions); OldPath is
// set for renames.
type FileChange struct {
	Path    string     `json:"path"`               // slash-separated, relative to the top level
	OldPath string     `json:"old_path,omitempty"` // renames only
	Action  FileAction `json:"action"`             // what happened
}

// DiffResult is the difference between two commits.
type DiffResult struct {
	// From and To are the resolved commit ids.
	From string `json:"from"`
	To   string `json:"to"`
	// Patch is a unified diff (binary files appear as "Binary files … differ"), cut at
	// MaxPatchBytes.
	Patch string `json:"patch"`
	// Truncated is true when Patch was cut.
	Truncated bool `json:"truncated,omitempty"`
	// Files lists every changed file, sorted by path, renames detected.
	Files []FileChange `json:"files"`
}

// MaxPatchBytes bounds DiffResult.Patch.
const MaxPatchBytes = 4 << 20

// Diff compares two revisions (commit ids or local branch names, validated like
// ValidateRevision) with go-git: the file list with rename detection and a unified patch.
// Typical use (get_mission_diff): from = Workspace.BaseCommit, to = Workspace.Branch. Errors
// wrap ErrInvalidRef or ErrUnknownRef.
func (m *Manager) Diff(ctx context.Context, r *Repo, from, to string) (DiffResult, error) {
	if err := m.checkOpen(); err != nil {
		return DiffResult{}, err
	}
	fromH, err := r.resolveCommit(from)
	if err != nil {
		return DiffResult{}, fmt.Errorf("diff: %w", err)
	}
	toH, err := r.resolveCommit(to)
	if err != nil {
		return DiffResult{}, fmt.Errorf("diff: %w", err)
	}
	res := DiffResult{From: fromH.String(), To: toH.String()}
	err = r.read(func(gg *git.Repository) error {
		res.Files, res.Patch = nil, ""
		changes, err := treeChanges(ctx, gg, fromH, toH)
		if err != nil {
			return err
		}
		for _, c := range changes {
			res.Files = append(res.Files, fileChange(c))
		}
		patch, err := changes.PatchContext(ctx)
		if err != nil {
			return fmt.Errorf("patch: %w", err)
		}
		res.Patch = patch.String()
		return nil
	})
	if err != nil {
		return DiffResult{}, fmt.Errorf("diff %s..%s: %w", from, to, err)
	}
	sort.Slice(res.Files, func(i, j int) bool { return res.Files[i].Path < res.Files[j].Path })
	if len(res.Patch) > MaxPatchBytes {
		res.Patch, res.Truncated = res.Patch[:MaxPatchBytes], true
	}
	return res, nil
}

// treeChanges diffs the trees of two commits with rename detection.
func treeChanges(ctx context.Context, gg *git.Repository, from, to plumbing.Hash) (object.Changes, error) {
	trees := make([]*object.Tree, 2)
	for i, h := range []plumbing.Hash{from, to} {
		c, err := gg.CommitObject(h)
		if err != nil {
			return nil, fmt.Errorf("read commit %s: %w", h, err)
		}
		if trees[i], err = c.Tree(); err != nil {
			return nil, fmt.Errorf("read tree of %s: %w", h, err)
		}
	}
	return object.DiffTreeWithOptions(ctx, trees[0], trees[1], &object.DiffTreeOptions{
		DetectRenames: true, RenameScore: 50, RenameLimit: 1000,
	})
}

func fileChange(c *object.Change) FileChange {
	action, err := c.Action()
	switch {
	case err != nil:
		return FileChange{Path: c.To.Name, Action: FileModified}
	case action == merkletrie.Insert:
		return FileChange{Path: c.To.Name, Action: FileAdded}
	case action == merkletrie.Delete:
		return FileChange{Path: c.From.Name, Action: FileDeleted}
	case c.From.Name != c.To.Name:
		return FileChange{Path: c.To.Name, OldPath: c.From.Name, Action: FileRenamed}
	default:
		return FileChange{Path: c.To.Name, Action: FileModified}
	}
}

// changedPaths lists the paths changed between two commits, sorted (a rename lists both
// names). It compares the trees directly and descends only into subtrees whose ids differ, so
// its cost follows the size of the change, not of the repository (go-git's DiffTree took
// about 5 ms for a one-file change in a 2,000-file repository).
func (r *Repo) changedPaths(ctx context.Context, from, to string) ([]string, error) {
	var paths []string
	err := r.read(func(gg *git.Repository) error {
		paths = nil
		var trees [2]*object.Tree
		for i, h := range []string{from, to} {
			c, err := gg.CommitObject(plumbing.NewHash(h))
			if err != nil {
				return fmt.Errorf("read commit %s: %w", h, err)
			}
			if trees[i], err = c.Tree(); err != nil {
				return fmt.Errorf("read tree of %s: %w", h, err)
			}
		}
		return diffTrees(ctx, gg, trees[0], trees[1], "", &paths)
	})
	if err != nil {
		return nil, fmt.Errorf("changed files: %w", err)
	}
	sort.Strings(paths)
	return paths, nil
}

// diffTrees appends to out the paths under prefix that differ between a and b (either may be
// nil: everything under the other one counts).
func diffTrees(ctx context.Context, gg *git.Repository, a, b *object.Tree, prefix string, out *[]string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	entries := func(t *object.Tree) map[string]object.TreeEntry {
		m := map[string]object.TreeEntry{}
		if t != nil {
			for _, e := range t.Entries {
				m[e.Name] = e
			}
		}
		return m
	}
	am, bm := entries(a), entries(b)
	for name, ea := range am {
		eb, ok := bm[name]
		if ok && ea.Hash == eb.Hash && ea.Mode == eb.Mode {
			continue
		}
		var sa, sb *object.Tree
		var err error
		if ea.Mode == filemode.Dir {
			if sa, err = gg.TreeObject(ea.Hash); err != nil {
				return err
			}
		}
		if ok && eb.Mode == filemode.Dir {
			if sb, err = gg.TreeObject(eb.Hash); err != nil {
				return err
			}
		}
		if ea.Mode != filemode.Dir || (ok && eb.Mode != filemode.Dir) {
			*out = append(*out, prefix+name) // a file (or link, or submodule) on either side
		}
		if sa != nil || sb != nil {
			if err := diffTrees(ctx, gg, sa, sb, prefix+name+"/", out); err != nil {
				return err
			}
		}
	}
	for name, eb := range bm {
		if _, ok := am[name]; ok {
			continue
		}
		if eb.Mode != filemode.Dir {
			*out = append(*out, prefix+name)
			continue
		}
		sb, err := gg.TreeObject(eb.Hash)
		if err != nil {
			return err
		}
		if err := diffTrees(ctx, gg, nil, sb, prefix+name+"/", out); err != nil {
			return err
		}
	}
	return nil
}

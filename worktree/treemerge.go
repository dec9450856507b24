package worktree

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// errNotTrivial: the merge is not one the tree walk may answer; `git merge-tree` decides.
var errNotTrivial = errors.New("not a trivial merge")

// trivialMergeTree merges the trees of commits ours and theirs over their merge base base in
// the object database without starting git, for the merges where every path was changed by
// at most one side: the result takes, path by path, the side that changed it. It returns
// ok=false whenever git's merge could differ, and the caller runs `git merge-tree
// --write-tree` (trees written by a walk that gave up stay unreferenced; git's gc prunes them):
//
//   - base must be the only merge base (the caller knows it from quickMergeBase's proof; with
//     several, git merges them into a virtual base first);
//   - an entry changed by both sides is merged only when it is a directory on all sides where
//     it exists (base may lack it), by the same rule one level down; anything else (a file
//     changed on both sides, even identically; a file on one side and a directory on the
//     other; a deletion on one side and a change on the other) is git's, with its content
//     merge, rename detection and conflict rules;
//   - a directory the merge would leave empty is git's too.
//
// Why this equals git's merge-ort (the default of `git merge-tree --write-tree`) where it
// answers: ort takes an entry changed on one side only as that side has it, and its rename
// handling can change that only for paths the walk refuses. A file rename is a deletion and
// an addition on one side; it changes the result only when the other side changed the old
// path too (rename/modify, rename/delete, rename/rename: both sides changed it) or added the
// new one (rename/add: both sides changed it). A directory rename on one side moves what the
// other side added under the old directory; the old directory is then gone on the renaming
// side and changed on the other, so both changed its entry and it is not a directory on
// both. Content merges, merge drivers and the renormalisation of .gitattributes act on paths
// changed on both sides only. The equality is checked against git in the tests on random
// histories (TestTrivialMergeTree_EqualsGitMergeTree).
//
// Trees are written as loose objects (0444, as git writes them), sorted and encoded as git
// encodes them; subtrees taken from one side keep their id.
func (r *Repo) trivialMergeTree(base, ours, theirs plumbing.Hash) (tree plumbing.Hash, ok bool, err error) {
	if r.replaced.present(r.commonDir) {
		return plumbing.ZeroHash, false, nil
	}
	var written []plumbing.Hash
	err = r.read(func(gg *git.Repository) error {
		roots := make([]plumbing.Hash, 3)
		for i, c := range []plumbing.Hash{base, ours, theirs} {
			commit, err := gg.CommitObject(c)
			if err != nil {
				return err
			}
			roots[i] = commit.TreeHash
		}
		var err error
		tm := treeMerger{gg: gg}
		tree, err = tm.merge(entryOf(roots[0]), entryOf(roots[1]), entryOf(roots[2]))
		written = tm.written
		return err
	})
	if errors.Is(err, errNotTrivial) {
		return plumbing.ZeroHash, false, nil
	}
	if err != nil {
		return plumbing.ZeroHash, false, fmt.Errorf("merge trees: %w", err)
	}
	for _, h := range written {
		hex := h.String()
		if err := os.Chmod(filepath.Join(r.commonDir, "objects", hex[:2], hex[2:]), 0o444); err != nil && !os.IsNotExist(err) {
			return plumbing.ZeroHash, false, fmt.Errorf("make object %s read-only: %w", hex, err)
		}
	}
	return tree, true, nil
}

// side is one side's entry for a name: absent, or a mode and an object id.
type side struct {
	present bool
	mode    filemode.FileMode
	hash    plumbing.Hash
}

func entryOf(tree plumbing.Hash) side { return side{present: true, mode: filemode.Dir, hash: tree} }

func (s side) isDir() bool { return s.present && s.mode == filemode.Dir }

// treeMerger walks three trees of one repository (opened, under ggMu).
type treeMerger struct {
	gg      *git.Repository
	written []plumbing.Hash
}

// merge merges three directory entries (b may be absent) and returns the merged tree's id.
func (tm *treeMerger) merge(b, o, t side) (plumbing.Hash, error) {
	bt, err := tm.entries(b)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	ot, err := tm.entries(o)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	tt, err := tm.entries(t)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	var out []object.TreeEntry
	for _, name := range unionNames(bt, ot, tt) {
		got, err := tm.mergeEntry(bt[name], ot[name], tt[name])
		if err != nil {
			return plumbing.ZeroHash, err
		}
		if got.present {
			out = append(out, object.TreeEntry{Name: name, Mode: got.mode, Hash: got.hash})
		}
	}
	if len(out) == 0 {
		return plumbing.ZeroHash, errNotTrivial
	}
	return tm.write(out)
}

// mergeEntry merges one name's three entries.
func (tm *treeMerger) mergeEntry(b, o, t side) (side, error) {
	switch {
	case o == b:
		return t, nil
	case t == b:
		return o, nil
	case o.isDir() && t.isDir() && (!b.present || b.isDir()):
		h, err := tm.merge(b, o, t)
		return side{present: true, mode: filemode.Dir, hash: h}, err
	}
	return side{}, errNotTrivial
}

// entries reads a directory entry's tree as a map by name (empty for an absent entry).
func (tm *treeMerger) entries(s side) (map[string]side, error) {
	out := map[string]side{}
	if !s.present {
		return out, nil
	}
	tree, err := tm.gg.TreeObject(s.hash)
	if err != nil {
		return nil, err
	}
	for _, e := range tree.Entries {
		out[e.Name] = side{present: true, mode: e.Mode, hash: e.Hash}
	}
	return out, nil
}

// write encodes and stores a tree, its entries sorted as git sorts them.
func (tm *treeMerger) write(entries []object.TreeEntry) (plumbing.Hash, error) {
	sort.Sort(object.TreeEntrySorter(entries))
	obj := tm.gg.Storer.NewEncodedObject()
	if err := (&object.Tree{Entries: entries}).Encode(obj); err != nil {
		return plumbing.ZeroHash, err
	}
	h, err := tm.gg.Storer.SetEncodedObject(obj)
	if err == nil {
		tm.written = append(tm.written, h)
	}
	return h, err
}

// unionNames returns the names present in any of the maps, sorted.
func unionNames(ms ...map[string]side) []string {
	seen := map[string]bool{}
	var names []string
	for _, m := range ms {
		for n := range m {
			if !seen[n] {
				seen[n] = true
				names = append(names, n)
			}
		}
	}
	sort.Strings(names)
	return names
}

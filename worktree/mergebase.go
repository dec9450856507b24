package worktree

import (
	"bytes"
	"container/heap"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// quickMergeBaseLimit bounds how many commits each walk of quickMergeBase reads.
const quickMergeBaseLimit = 1000

// quickMergeBase answers `git merge-base old tip` without starting git in the landing shapes,
// where base (the attempt's base commit, from the workspace record) was a tip of the target.
// ok=false (the caller asks git) whenever it cannot prove its answer; it never guesses.
//
// The proof, with anc*(x) = x and its ancestors:
//
//   - A = the commits reachable from tip without passing base (walkAbove). When every path from
//     tip reaches base, anc*(tip) = A ∪ anc*(base), and no commit of A is in anc*(base).
//   - old is walked down to the target's own history: its walk stops at base and at any commit
//     of base's first-parent line (the target's earlier tips, which the branches merged into
//     the target since base started from), all of them in anc*(base). When every path from old
//     ends there, anc*(old) = W ∪ anc*(the line commits met), W the walked commits; base is an
//     ancestor of old exactly when the walk met base itself.
//   - Then the common ancestors are (A ∩ W) ∪ anc*(base): the merge base is base when A ∩ W is
//     empty, tip when tip ∈ W (the attempt is already in), and otherwise git decides.
//
// Commit dates only steer how far base's first-parent line is read before a commit of old's
// walk is compared with it; a skewed clock costs extra reads (or the limit, then git), never a
// wrong answer. old ∈ A (or old = base) answers old at once: the target is an ancestor of tip.
// A target rebased or reset so that base is no longer in it is not answered (git is asked),
// nor is anything in a repository with replace refs or grafts (git's history is not go-git's).
func (r *Repo) quickMergeBase(old, tip, base plumbing.Hash) (mb plumbing.Hash, ok bool) {
	if base.IsZero() || r.replaced.present(r.commonDir) {
		return plumbing.ZeroHash, false
	}
	err := r.read(func(gg *git.Repository) error {
		var err error
		mb, ok, err = mergeBaseAbove(gg, old, tip, base)
		return err
	})
	if err != nil {
		return plumbing.ZeroHash, false
	}
	return mb, ok
}

// mergeBaseAbove is quickMergeBase on an open repository (see there for the proof).
func mergeBaseAbove(gg *git.Repository, old, tip, base plumbing.Hash) (plumbing.Hash, bool, error) {
	b, err := gg.CommitObject(base)
	if err != nil {
		return plumbing.ZeroHash, false, err
	}
	above, ok, err := walkAbove(gg, tip, base, b.Committer.When)
	if err != nil || !ok {
		return plumbing.ZeroHash, false, err
	}
	if old == base || above[old] {
		return old, true, nil
	}
	walked, ok, err := walkToLine(gg, old, b)
	if err != nil || !ok {
		return plumbing.ZeroHash, false, err
	}
	if walked[tip] {
		return tip, true, nil
	}
	for h := range above {
		if walked[h] {
			return plumbing.ZeroHash, false, nil
		}
	}
	return base, true, nil
}

// walkAbove returns the commits reachable from start without passing through stop. ok=false
// when some path misses stop (a root commit is reached), the walk exceeds the limit, or it
// meets a commit made before floor (stop's commit time): on the attempt's side such a commit is
// almost surely below stop on a path that misses it, and walking on would only reach the root
// or the limit. Giving up is always safe (git answers).
func walkAbove(gg *git.Repository, start, stop plumbing.Hash, floor time.Time) (map[plumbing.Hash]bool, bool, error) {
	seen := map[plumbing.Hash]bool{}
	queue := []plumbing.Hash{start}
	for len(queue) > 0 {
		h := queue[0]
		queue = queue[1:]
		if h == stop || seen[h] {
			continue
		}
		if len(seen) >= quickMergeBaseLimit {
			return nil, false, nil
		}
		seen[h] = true
		c, err := gg.CommitObject(h)
		if err != nil {
			return nil, false, fmt.Errorf("read commit %s: %w", h, err)
		}
		if len(c.ParentHashes) == 0 || c.Committer.When.Before(floor) {
			return nil, false, nil
		}
		queue = append(queue, c.ParentHashes...)
	}
	return seen, true, nil
}

// walkToLine walks from start, newest commit first, and stops at base and at the commits of
// base's first-parent line. It returns the commits walked (neither base nor the line's).
// ok=false when base was not met (base is not an ancestor of start), a root commit outside the
// line was reached, or a limit was exceeded.
func walkToLine(gg *git.Repository, start plumbing.Hash, base *object.Commit) (map[plumbing.Hash]bool, bool, error) {
	line := &firstParentLine{gg: gg, on: map[plumbing.Hash]bool{}, next: base}
	first, err := gg.CommitObject(start)
	if err != nil {
		return nil, false, fmt.Errorf("read commit %s: %w", start, err)
	}
	walked := map[plumbing.Hash]bool{}
	queued := map[plumbing.Hash]bool{start: true}
	q := &byDate{first}
	metBase := false
	for q.Len() > 0 {
		c := heap.Pop(q).(*object.Commit)
		onLine, err := line.has(c)
		if err != nil {
			return nil, false, err
		}
		if onLine {
			metBase = metBase || c.Hash == base.Hash
			continue
		}
		if len(walked) >= quickMergeBaseLimit || len(c.ParentHashes) == 0 {
			return nil, false, nil
		}
		walked[c.Hash] = true
		for _, p := range c.ParentHashes {
			if queued[p] {
				continue
			}
			queued[p] = true
			pc, err := gg.CommitObject(p)
			if err != nil {
				return nil, false, fmt.Errorf("read commit %s: %w", p, err)
			}
			heap.Push(q, pc)
		}
	}
	return walked, metBase, nil
}

// firstParentLine is base's first-parent line (base, its first parent, ...), read lazily from
// the newest end: every commit on it is base or an ancestor of base.
type firstParentLine struct {
	gg   *git.Repository
	on   map[plumbing.Hash]bool
	next *object.Commit // the next commit to add; nil past the root or the limit
}

// has reports whether c is on the line, after reading the line down to c's commit time.
func (l *firstParentLine) has(c *object.Commit) (bool, error) {
	for l.next != nil && !l.next.Committer.When.Before(c.Committer.When) {
		if err := l.advance(); err != nil {
			return false, err
		}
	}
	return l.on[c.Hash], nil
}

// advance adds the next commit of the line and reads its first parent.
func (l *firstParentLine) advance() error {
	cur := l.next
	l.on[cur.Hash] = true
	l.next = nil
	if len(cur.ParentHashes) == 0 || len(l.on) >= quickMergeBaseLimit {
		return nil
	}
	p, err := l.gg.CommitObject(cur.ParentHashes[0])
	if err != nil {
		return fmt.Errorf("read commit %s: %w", cur.ParentHashes[0], err)
	}
	l.next = p
	return nil
}

// byDate is a max-heap of commits by committer time.
type byDate []*object.Commit

func (q byDate) Len() int           { return len(q) }
func (q byDate) Less(i, j int) bool { return q[i].Committer.When.After(q[j].Committer.When) }
func (q byDate) Swap(i, j int)      { q[i], q[j] = q[j], q[i] }
func (q *byDate) Push(x any)        { *q = append(*q, x.(*object.Commit)) }
func (q *byDate) Pop() any {
	old := *q
	c := old[len(old)-1]
	*q = old[:len(old)-1]
	return c
}

// replaceRefs remembers whether a repository rewrites its history for git with replace refs
// or grafts, which git's merge base honours and go-git does not: quickMergeBase then leaves
// every answer to git. packed-refs is scanned again only when its mtime or size changes.
type replaceRefs struct {
	mu        sync.Mutex
	packedMod time.Time
	packedLen int64
	packedHas bool
}

// present reports whether refs/replace/* or info/grafts exist in the common git dir.
func (p *replaceRefs) present(commonDir string) bool {
	if _, err := os.Stat(filepath.Join(commonDir, "info", "grafts")); err == nil {
		return true
	}
	if entries, err := os.ReadDir(filepath.Join(commonDir, "refs", "replace")); err == nil && len(entries) > 0 {
		return true
	}
	path := filepath.Join(commonDir, "packed-refs")
	st, err := os.Stat(path)
	if err != nil {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if st.ModTime().Equal(p.packedMod) && st.Size() == p.packedLen {
		return p.packedHas
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return true // unknown: let git answer
	}
	p.packedMod, p.packedLen, p.packedHas = st.ModTime(), st.Size(), bytes.Contains(data, []byte(" refs/replace/"))
	return p.packedHas
}

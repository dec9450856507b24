package worktree

import (
	"fmt"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
)

// quickMergeBaseLimit bounds each side's walk in quickMergeBase.
const quickMergeBaseLimit = 1000

// quickMergeBase answers `git merge-base old tip` without starting git in the common landing
// case, where the attempt's base commit lies below both tips: it walks each side down to base
// (go-git, at most quickMergeBaseLimit commits each). If every path from both tips reaches base,
// the ancestors of each tip are its walked set plus the ancestors of base, so the merge base is
// tip (tip walked from old), old (old walked from tip) or, when the two walked sets do not meet,
// base itself. ok=false (the caller asks git) when a walk reaches a root commit or the limit,
// when the walked sets meet, or on a read error.
func (r *Repo) quickMergeBase(old, tip, base plumbing.Hash) (mb plumbing.Hash, ok bool) {
	if base.IsZero() {
		return plumbing.ZeroHash, false
	}
	err := r.read(func(gg *git.Repository) error {
		b, err := gg.CommitObject(base)
		if err != nil {
			return err
		}
		floor := b.Committer.When
		aboveTip, okTip, err := walkAbove(gg, tip, base, floor)
		if err != nil || !okTip {
			return err
		}
		aboveOld, okOld, err := walkAbove(gg, old, base, floor)
		if err != nil || !okOld {
			return err
		}
		switch {
		case tip == base || aboveOld[tip]:
			mb, ok = tip, true
		case old == base || aboveTip[old]:
			mb, ok = old, true
		default:
			for h := range aboveTip {
				if aboveOld[h] {
					return nil
				}
			}
			mb, ok = base, true
		}
		return nil
	})
	if err != nil {
		return plumbing.ZeroHash, false
	}
	return mb, ok
}

// walkAbove returns the commits reachable from start without passing through stop. ok=false
// when some path misses stop (a root commit is reached), the walk exceeds the limit, or it
// meets a commit made before floor (stop's commit time): such a commit is almost surely below
// stop on a path that misses it — a branch of an older base merged into the target — and
// walking on would only reach the root or the limit. Giving up is always safe (git answers).
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

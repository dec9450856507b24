package worktree

import (
	"context"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
)

// maxFirstParentWalk bounds firstParentReaches: an attempt's branch is far shorter, and a
// walk that gives up only costs a merge commit where a fast-forward would have done.
const maxFirstParentWalk = 10000

// firstParentReaches reports whether target is on the first-parent chain of tip, i.e.
// whether moving the target branch from target to tip by fast-forward keeps the target's
// `git log --first-parent` the target's own history followed by the branch's commits.
//
// A branch whose tip merged the target into the branch (a repair's "Merge main into …", first
// parent the branch) has the target as an ancestor but not on its first-parent chain: a
// fast-forward to it would make the target's first-parent history run through the branch
// and hide the landings between the branch's base and the target tip (seen in the fresh-user
// cluster trial: 10 of 12 landings on `git log --first-parent main`). Land then writes a merge
// commit instead. The walk stops, answering false, after maxFirstParentWalk commits or at a
// commit older than a day before target's (it is then past target's place in history).
func (r *Repo) firstParentReaches(ctx context.Context, tip, target string) (bool, error) {
	var found bool
	err := r.read(func(gg *git.Repository) error {
		found = false
		t, err := gg.CommitObject(plumbing.NewHash(target))
		if err != nil {
			return err
		}
		floor := t.Committer.When.Add(-24 * time.Hour)
		h := plumbing.NewHash(tip)
		for range maxFirstParentWalk {
			if h == t.Hash {
				found = true
				return nil
			}
			if err := ctx.Err(); err != nil {
				return err
			}
			c, err := gg.CommitObject(h)
			if err != nil {
				return err
			}
			if len(c.ParentHashes) == 0 || c.Committer.When.Before(floor) {
				return nil
			}
			h = c.ParentHashes[0]
		}
		return nil
	})
	return found, err
}

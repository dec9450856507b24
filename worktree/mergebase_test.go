package worktree

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/stretchr/testify/require"
)

// quickMergeBase must agree with `git merge-base --all` whenever it answers, on a random
// history with branches, merges and criss-cross merges, and must answer the common landing
// shapes (fast-forward, already in, diverged from the base) without asking git.
func TestQuickMergeBase_AgreesWithGit(t *testing.T) {
	t.Parallel()
	tr := newTestRepo(t, nil)
	tree := tr.git("rev-parse", "HEAD^{tree}")
	root := tr.tip("main")
	rng := rand.New(rand.NewPCG(7, 11))
	commits := []string{root}
	commit := func(parents ...string) string {
		args := []string{"commit-tree", "-m", fmt.Sprint(len(commits))}
		for _, p := range parents {
			args = append(args, "-p", p)
		}
		c := tr.git(append(args, tree)...)
		commits = append(commits, c)
		return c
	}
	for range 60 {
		a := commits[len(commits)-1-rng.IntN(min(len(commits), 8))]
		if rng.IntN(4) == 0 && len(commits) > 3 {
			b := commits[rng.IntN(len(commits))]
			if b != a {
				commit(a, b)
				continue
			}
		}
		commit(a)
	}
	m := newTestManager(t)
	r := openRepo(t, m, tr.dir)

	answered := 0
	for i := range 400 {
		old, tip, base := commits[rng.IntN(len(commits))], commits[rng.IntN(len(commits))], commits[rng.IntN(len(commits))]
		if i%2 == 0 { // often the base is a real common ancestor, as in a landing
			base = strings.Fields(tr.git("merge-base", "--all", old, tip))[0]
			if parent, err := gitTry(tr.dir, "rev-parse", "--verify", "-q", base+"~1"); i%4 == 0 && err == nil {
				base = strings.TrimSpace(parent)
			}
		}
		mb, ok := r.quickMergeBase(plumbing.NewHash(old), plumbing.NewHash(tip), plumbing.NewHash(base))
		if !ok {
			continue
		}
		answered++
		all := strings.Fields(tr.git("merge-base", "--all", old, tip))
		require.True(t, slices.Contains(all, mb.String()), "old %s tip %s base %s: got %s, git says %v", old, tip, base, mb, all)
	}
	t.Logf("answered %d of 400 without git", answered)
	require.Greater(t, answered, 40, "the quick path answers a fair share")

	// the landing shapes
	base := commit(root)
	agent := commit(commit(base))
	person := commit(commit(base))
	for _, tc := range []struct{ old, tip, want string }{
		{base, agent, base},           // fast-forward: merge base is the target
		{person, agent, base},         // diverged
		{agent, agent, agent},         // already in
		{commit(agent), agent, agent}, // already in, target moved on
	} {
		mb, ok := r.quickMergeBase(plumbing.NewHash(tc.old), plumbing.NewHash(tc.tip), plumbing.NewHash(base))
		require.True(t, ok)
		require.Equal(t, tc.want, mb.String())
	}
}

// A target that merged a branch of an older base (another attempt that started before this
// one's base) is the common shape while several agents work on one branch: the walk from the
// target stops on the base's first-parent line and answers it without git.
func TestQuickMergeBase_AnswersBranchesOfOlderBases(t *testing.T) {
	t.Parallel()
	tr := newTestRepo(t, nil)
	h := newHistory(tr)
	root := tr.tip("main")
	older := h.at(2000000000, root)   // the base of an earlier attempt
	base := h.at(2000001000, older)   // this attempt's base: the target when it started
	landed := h.at(2000002000, older) // the earlier attempt's work
	target := h.at(2000003000, base, landed)
	tip := h.at(2000004000, base)
	m := newTestManager(t)
	r := openRepo(t, m, tr.dir)

	mb, ok := r.quickMergeBase(plumbing.NewHash(target), plumbing.NewHash(tip), plumbing.NewHash(base))
	require.True(t, ok, "answered from the target's first-parent line")
	require.Equal(t, base, mb.String())
	require.Equal(t, base, strings.TrimSpace(tr.git("merge-base", target, tip)))
	mb, ok = r.quickMergeBase(plumbing.NewHash(base), plumbing.NewHash(tip), plumbing.NewHash(base))
	require.True(t, ok)
	require.Equal(t, base, mb.String())
}

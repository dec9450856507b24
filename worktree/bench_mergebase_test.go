package worktree

import (
	"fmt"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/stretchr/testify/require"
)

// BenchmarkLandingSteps measures the two steps of a merge landing that no longer start git,
// each against the git process it replaces, interleaved in the same run on a landing-shaped
// history (4 attempts in flight, each landing merging an attempt that started from an older
// target tip than the next one's base):
//
//   - merge base: quickMergeBase against `git merge-base` for the next attempt;
//
//   - merge commit: writeCommit (go-git) against `git commit-tree` of the same tree and parents.
//
//     go test ./worktree -run '^$' -bench LandingSteps -benchtime 50x
func BenchmarkLandingSteps(b *testing.B) {
	tr := newTestRepo(b, nil)
	h := newHistory(tr)
	m := newTestManager(b)
	r := openRepo(b, m, tr.dir)
	now := int64(2000000000)
	next := func() int64 { now += 10; return now }
	line := []string{tr.tip("main")}
	inFlight := []string{}
	for range 4 {
		inFlight = append(inFlight, line[0])
	}
	// 40 landings: each lands the oldest attempt in flight by a merge, and a new attempt starts
	// from the new target tip.
	for range 40 {
		base := inFlight[0]
		tip := h.at(next(), base)
		line = append(line, h.at(next(), line[len(line)-1], tip))
		inFlight = append(inFlight[1:], line[len(line)-1])
	}
	target := line[len(line)-1]
	base := inFlight[1] // the target three landings ago
	tip := h.at(next(), h.at(next(), base))
	oldest := inFlight[0]
	oldTip := h.at(next(), oldest)
	tree := tr.git("rev-parse", "HEAD^{tree}")
	ctx := ctxT(b)
	var gitMB, quickMB, oldGitMB, oldQuickMB, gitCT, ourCT []sample
	b.StopTimer()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var viaGit, viaWalk string
		var ok bool
		steps := []func(){
			func() {
				gitMB = append(gitMB, measure(b, func() {
					var err error
					viaGit, err = m.mergeBase(ctx, r, target, tip)
					require.NoError(b, err)
				}))
			},
			func() {
				quickMB = append(quickMB, measure(b, func() {
					var mb plumbing.Hash
					mb, ok = r.quickMergeBase(plumbing.NewHash(target), plumbing.NewHash(tip), plumbing.NewHash(base))
					viaWalk = mb.String()
				}))
			},
			func() {
				oldGitMB = append(oldGitMB, measure(b, func() {
					_, err := m.mergeBase(ctx, r, target, oldTip)
					require.NoError(b, err)
				}))
			},
			func() {
				oldQuickMB = append(oldQuickMB, measure(b, func() {
					r.quickMergeBase(plumbing.NewHash(target), plumbing.NewHash(oldTip), plumbing.NewHash(oldest))
				}))
			},
			func() {
				msg := withTrailers(fmt.Sprintf("bench %d", i), "", "m", 1)
				gitCT = append(gitCT, measure(b, func() {
					_, err := m.git.run(ctx, r.root, runOpts{stdin: []byte(msg)}, "commit-tree", "--no-gpg-sign",
						"-p", target, "-p", tip, "-F", "-", "--end-of-options", tree)
					require.NoError(b, err)
				}))
			},
			func() {
				msg := withTrailers(fmt.Sprintf("bench %d", i), "", "m", 2)
				ourCT = append(ourCT, measure(b, func() {
					_, err := r.writeCommit(m.git.author, time.Now(), plumbing.NewHash(tree),
						[]plumbing.Hash{plumbing.NewHash(target), plumbing.NewHash(tip)}, msg)
					require.NoError(b, err)
				}))
			},
		}
		for j := range steps { // the order rotates every iteration
			steps[(i+j)%len(steps)]()
		}
		require.True(b, ok, "the walk answers the landing shape")
		require.Equal(b, viaGit, viaWalk)
	}
	reportRatios(b, "git_merge_base", gitMB, map[string][]sample{"walk": quickMB})
	reportRatios(b, "git_merge_base_oldest_attempt", oldGitMB, map[string][]sample{"walk_oldest_attempt": oldQuickMB})
	reportRatios(b, "git_commit_tree", gitCT, map[string][]sample{"go_git_commit": ourCT})
}

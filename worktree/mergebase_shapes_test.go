package worktree

import (
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/stretchr/testify/require"
)

// history writes commits of the repository's first tree with chosen dates (`git commit-tree`).
type history struct {
	tr   *testRepo
	tree string
	n    int
}

func newHistory(tr *testRepo) *history {
	return &history{tr: tr, tree: tr.git("rev-parse", "HEAD^{tree}")}
}

// at writes a commit dated when (seconds since the epoch) with the given parents.
func (h *history) at(when int64, parents ...string) string {
	h.tr.t.Helper()
	h.n++
	args := []string{"commit-tree", "-m", fmt.Sprint("c", h.n)}
	for _, p := range parents {
		args = append(args, "-p", p)
	}
	date := fmt.Sprintf("%d +0000", when)
	out, err := gitTryEnv(h.tr.dir, []string{"GIT_COMMITTER_DATE=" + date, "GIT_AUTHOR_DATE=" + date}, append(args, h.tree)...)
	require.NoError(h.tr.t, err, out)
	return strings.TrimSpace(out)
}

// requireAgrees checks quickMergeBase against `git merge-base --all` and returns whether it
// answered.
func requireAgrees(t *testing.T, tr *testRepo, r *Repo, old, tip, base string) bool {
	t.Helper()
	mb, ok := r.quickMergeBase(plumbing.NewHash(old), plumbing.NewHash(tip), plumbing.NewHash(base))
	if !ok {
		return false
	}
	out, err := gitTry(tr.dir, "merge-base", "--all", old, tip)
	all := strings.Fields(out)
	require.NoError(t, err, "git found no merge base of %s and %s, the walk said %s", old, tip, mb)
	require.Equal(t, []string{mb.String()}, all, "old %s tip %s base %s", old, tip, base)
	return true
}

// The target moved under the attempt in every way the landing meets: a person's commit, other
// landings (fast-forward and merges of older bases), a rebase and force-pushes. The walk
// answers the shapes where the base is still in the target and agrees with git; where the
// target was rewritten it leaves the answer to git.
func TestQuickMergeBase_TargetMovedUnderTheAttempt(t *testing.T) {
	t.Parallel()
	tr := newTestRepo(t, nil)
	h := newHistory(tr)
	root := tr.tip("main")
	t0 := int64(2000000000)
	l1 := h.at(t0+10, root)
	base := h.at(t0+20, l1)     // the target when the attempt started
	work := h.at(t0+100, base)  // the attempt's commit
	tip := h.at(t0+110, work)   // and its second
	other := h.at(t0+30, l1)    // another attempt, started before base
	person := h.at(t0+40, base) // a person's commit on the target
	landedOther := h.at(t0+50, person, other)
	ffOther := h.at(t0+60, landedOther) // a fast-forward landing on top
	m := newTestManager(t)
	r := openRepo(t, m, tr.dir)

	for _, tc := range []struct {
		name, old string
		want      string // "" = left to git
	}{
		{"unmoved (fast-forward)", base, base},
		{"a person's commit", person, base},
		{"another landing of an older base", landedOther, base},
		{"a fast-forward landing on top of it", ffOther, base},
		{"already landed by a merge", h.at(t0+200, ffOther, tip), tip},
		{"already landed, moved on", h.at(t0+300, h.at(t0+200, ffOther, tip)), tip},
		{"rebased: base rewritten", h.at(t0+70, h.at(t0+65, l1)), ""},
		{"force-pushed back below base", l1, ""},
		{"force-pushed to an unrelated history", h.at(t0 + 80), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			answered := requireAgrees(t, tr, r, tc.old, tip, base)
			if tc.want == "" {
				require.False(t, answered, "a rewritten target is left to git")
				return
			}
			require.True(t, answered)
			mb, _ := r.quickMergeBase(plumbing.NewHash(tc.old), plumbing.NewHash(tip), plumbing.NewHash(base))
			require.Equal(t, tc.want, mb.String())
		})
	}
	// a base the attempt's branch does not contain, or that is no commit, is never trusted
	require.False(t, requireAgrees(t, tr, r, ffOther, other, base))
	_, ok := r.quickMergeBase(plumbing.NewHash(ffOther), plumbing.NewHash(tip), plumbing.NewHash(strings.Repeat("ab", 20)))
	require.False(t, ok)
}

// On random landing-shaped histories — attempts started from recent target tips, landed by
// fast-forward or merge in any order, repairs that merge the target into their branch,
// people's commits, force-pushes and rebases of the target, clocks that run behind — every
// answer of the walk equals `git merge-base --all` (which then has exactly one answer), and
// most landings are answered without git.
func TestQuickMergeBase_RandomLandingHistories(t *testing.T) {
	t.Parallel()
	tr := newTestRepo(t, nil)
	m := newTestManager(t)
	r := openRepo(t, m, tr.dir)
	asked, answered := 0, 0
	for seed := range uint64(3) {
		hs := landingHistory(tr, rand.New(rand.NewPCG(seed, 99)))
		for _, q := range hs.queries {
			asked++
			if requireAgrees(t, tr, r, q.old, q.tip, q.base) {
				answered++
			}
		}
	}
	t.Logf("answered %d of %d landing-shaped queries without git", answered, asked)
	require.Greater(t, answered, asked/2, "the walk answers most landings")
}

type mbQuery struct{ old, tip, base string }

type landingHist struct {
	h       *history
	rng     *rand.Rand
	now     int64
	line    []string // the target's tips, oldest first
	queries []mbQuery
}

// date is the next commit date: mostly later than the last, sometimes a clock behind.
func (lh *landingHist) date() int64 {
	lh.now += 1 + lh.rng.Int64N(60)
	if lh.rng.IntN(8) == 0 {
		return lh.now - lh.rng.Int64N(3000)
	}
	return lh.now
}

// landingHistory grows a target with 4 attempts in flight and records, for each landing, the
// merge-base question the landing asks (target tip, attempt tip, attempt base).
func landingHistory(tr *testRepo, rng *rand.Rand) *landingHist {
	lh := &landingHist{h: newHistory(tr), rng: rng, now: 2000000000, line: []string{tr.tip("main")}}
	type attempt struct{ base, tip string }
	var inFlight []attempt
	target := func() string { return lh.line[len(lh.line)-1] }
	for range 40 {
		for len(inFlight) < 4 {
			base := lh.line[max(0, len(lh.line)-1-rng.IntN(3))]
			tip := lh.h.at(lh.date(), base)
			for range rng.IntN(3) {
				tip = lh.h.at(lh.date(), tip)
			}
			inFlight = append(inFlight, attempt{base, tip})
		}
		i := rng.IntN(len(inFlight))
		a := inFlight[i]
		inFlight = slices.Delete(inFlight, i, i+1)
		switch rng.IntN(10) {
		case 0: // a person commits on the target
			lh.line = append(lh.line, lh.h.at(lh.date(), target()))
		case 1: // the target is force-pushed back, or rebased onto an older tip
			old := lh.line[max(0, len(lh.line)-1-rng.IntN(4))]
			if rng.IntN(2) == 0 {
				old = lh.h.at(lh.date(), old)
			}
			lh.line = append(lh.line, old)
		case 2: // a repair: the attempt merges the target into its branch first
			a.tip = lh.h.at(lh.date(), a.tip, target())
		}
		lh.queries = append(lh.queries, mbQuery{target(), a.tip, a.base})
		if target() == a.base && rng.IntN(2) == 0 {
			lh.line = append(lh.line, a.tip)
		} else {
			lh.line = append(lh.line, lh.h.at(lh.date(), target(), a.tip))
		}
		lh.queries = append(lh.queries, mbQuery{target(), a.tip, a.base}) // asked again: already in
	}
	return lh
}

// The shape of several agents on one branch: an attempt lands after the target took in
// another attempt that started before this one's base. Neither its merge base nor its merge
// commit starts a git process, nor its merged tree (the attempts changed different files:
// the tree walk writes it); only the status and the move of the target do.
func TestLand_AfterAnAttemptOfAnOlderBaseRunsNoMergeBase(t *testing.T) {
	t.Parallel()
	tr := newTestRepo(t, map[string]string{"x.txt": "x\n", "y.txt": "y\n", "z.txt": "z\n"})
	tr.git("checkout", "-q", "--detach")
	logs := &syncBuffer{}
	m := newTestManager(t, func(c *Config) {
		c.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})
	r := openRepo(t, m, tr.dir)
	x, y := prepareMain(t, m, r, "x"), prepareMain(t, m, r, "y")
	writeFile(t, x.Path, "x.txt", "X\n")
	writeFile(t, y.Path, "y.txt", "Y\n")
	require.True(t, land(t, m, r, x).FastForward)
	z := prepareMain(t, m, r, "z") // based on x's landing
	writeFile(t, z.Path, "z.txt", "Z\n")
	ly := land(t, m, r, y) // y started before z's base: the target now merges an older base
	require.False(t, ly.FastForward)

	logs.mu.Lock()
	logs.buf.Reset()
	logs.mu.Unlock()
	lz := land(t, m, r, z)
	require.Equal(t, LandLanded, lz.Status)
	require.False(t, lz.FastForward)
	require.Equal(t, []string{"z.txt"}, lz.ChangedFiles)
	for _, git := range []string{"merge-base", "commit-tree", "merge-tree"} {
		require.NotContains(t, logs.String(), "args=\""+git, "no git %s for this landing", git)
	}
	require.Contains(t, logs.String(), "args=\"update-ref", "the log shows the git processes")
	require.Equal(t, 1, strings.Count(logs.String(), "args=\"--no-optional-locks status"),
		"the work z left uncommitted is committed on the status the landing's probe took")
	require.Equal(t, 2, countTrailer(t, tr.dir, "main", "z", 1), "z's pending-work commit and its merge")
	require.Equal(t, "X\nY\nZ", tr.git("show", "main:x.txt")+"\n"+tr.git("show", "main:y.txt")+"\n"+tr.git("show", "main:z.txt"))
	fsckClean(t, tr.dir)
}

// git's merge base follows replace refs and grafts, go-git's reads do not: in a repository
// that has any (loose or packed), every merge base is left to git.
func TestQuickMergeBase_LeavesReplaceRefsAndGraftsToGit(t *testing.T) {
	t.Parallel()
	tr := newTestRepo(t, nil)
	h := newHistory(tr)
	root := tr.tip("main")
	base := h.at(2000000010, root)
	target := h.at(2000000020, base)
	tip := h.at(2000000030, base)
	m := newTestManager(t)
	r := openRepo(t, m, tr.dir)
	answers := func() bool {
		_, ok := r.quickMergeBase(plumbing.NewHash(target), plumbing.NewHash(tip), plumbing.NewHash(base))
		return ok
	}
	require.True(t, answers())

	tr.git("replace", target, h.at(2000000040, root)) // git now sees target's parent as root
	require.False(t, answers(), "a loose replace ref")
	tr.git("pack-refs", "--all")
	require.NoFileExists(t, filepath.Join(r.commonDir, "refs", "replace", target))
	require.False(t, answers(), "a packed replace ref")
	tr.git("replace", "-d", target)
	require.True(t, answers())

	require.NoError(t, os.MkdirAll(filepath.Join(r.commonDir, "info"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(r.commonDir, "info", "grafts"), []byte(target+"\n"), 0o644))
	require.False(t, answers(), "grafts")
}

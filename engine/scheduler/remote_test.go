package scheduler_test

import (
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/e2e/testenv"
	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/engine/scheduler"
	"github.com/mcp-scheduler/mcp-scheduler/worktree"
)

// remoteHarness is a harness whose missions name "shop": a bare repository made by the test,
// served by git-http-backend on 127.0.0.1, which the scheduler clones, fetches and pushes to.
func remoteHarness(t *testing.T) (*harness, string) {
	t.Helper()
	h, bare, _ := remoteHarnessWithSwitch(t)
	return h, bare
}

// remoteHarnessWithSwitch is remoteHarness with a switch that makes the remote's server answer
// 503 to every request while it is on (a remote that cannot be reached).
func remoteHarnessWithSwitch(t *testing.T, opts ...option) (*harness, string, *atomic.Bool) {
	t.Helper()
	const backend = "/usr/lib/git-core/git-http-backend"
	if _, err := os.Stat(backend); err != nil {
		if testenv.InCI() {
			t.Fatalf("git-http-backend is missing in CI: %v", err)
		}
		t.Skipf("git-http-backend not installed: %v", err)
	}
	base := t.TempDir()
	bare := filepath.Join(base, "shop.git")
	git(t, base, "init", "-q", "--bare", "-b", "main", bare)
	git(t, bare, "config", "http.receivepack", "true")
	git(t, makeRepo(t), "push", "-q", bare, "main:main")
	down := &atomic.Bool{}
	cgiH := &cgi.Handler{Path: backend, Env: []string{"GIT_PROJECT_ROOT=" + base, "GIT_HTTP_EXPORT_ALL=1"}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if down.Load() {
			http.Error(w, "down for the test", http.StatusServiceUnavailable)
			return
		}
		cgiH.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	h := newHarnessWith(t, worktree.Config{Remotes: []worktree.Remote{{Name: "shop", URL: srv.URL + "/shop.git"}}},
		append([]option{func(o *engine.Options, _ *scheduler.Config) {
			o.DefaultRepository = "shop"
			o.ResolveRepository = func(p string) (string, error) { return p, nil }
		}}, opts...)...)
	return h, bare, down
}

// A remote that cannot be reached when a workspace is prepared (its server answers 503) fails
// the attempt with kind workspace, within the retry budget — not for good, as a failure no
// retry can fix would — and once the remote answers again the mission runs and lands.
func TestRemote_UnreachableRemoteAtPrepareIsRetried(t *testing.T) {
	h, bare, down := remoteHarnessWithSwitch(t)
	down.Store(true)
	m := h.create(engine.MissionSpec{Title: "waits for the remote", WriteArea: []string{"u.txt"}, Brief: "@write u.txt up\n@commit u\n@done"})
	h.until("the attempt to fail with kind workspace", func() bool {
		got := h.mission(m.ID)
		return got.LastFailure != nil && got.LastFailure.Kind == domain.FailureWorkspace
	})
	require.NotEqual(t, domain.StateFailed, h.mission(m.ID).State, "not failed for good: %+v", h.mission(m.ID).LastFailure)
	require.Contains(t, h.mission(m.ID).LastFailure.Diagnostic, "talking to the remote failed")
	down.Store(false)
	h.until("it lands once the remote is back", func() bool { return h.mission(m.ID).Landing == domain.LandingLanded })
	out, err := exec.Command("git", "-C", bare, "show", "main:u.txt").CombinedOutput()
	require.NoError(t, err, "%s", out)
}

// A mission of a remote repository runs in a workspace of the node's clone and lands on the
// remote: the remote's main holds its work, fsck is clean.
func TestRemote_MissionLandsOnTheRemote(t *testing.T) {
	h, bare := remoteHarness(t)
	m := h.create(engine.MissionSpec{Title: "remote work", WriteArea: []string{"r.txt"}, Brief: "@write r.txt remote\n@commit r\n@done"})
	h.until("it lands", func() bool { return h.mission(m.ID).Landing == domain.LandingLanded })

	out, err := exec.Command("git", "-C", bare, "show", "main:r.txt").CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Equal(t, "remote", strings.TrimSpace(string(out)))
	git(t, bare, "fsck", "--strict", "--no-progress")
	require.Equal(t, "shop", h.mission(m.ID).Repository)
	require.True(t, strings.HasPrefix(h.runRecord(m.ID).Worktree.Path, h.data), "the workspace is in the node's data dir")

	reps, err := h.s.Cleanup(h.ctx, "", 1, false)
	require.NoError(t, err)
	require.Len(t, reps, 1)
	require.Equal(t, "shop", reps[0].Repository)
	require.Len(t, reps[0].Report.Removed, 1, "the landed workspace is cleaned up: %+v", reps[0].Report)
}

// A remote that refuses the push (a pre-receive hook) escalates to the person with git's
// message in the evidence; the landing is not recorded as landed and the remote did not move.
func TestRemote_RefusedPushEscalatesWithTheGitError(t *testing.T) {
	h, bare := remoteHarness(t)
	before := git(t, bare, "rev-parse", "main")
	hook := "#!/bin/sh\necho 'pushes to main need a signed-off release ticket' >&2\nexit 1\n"
	require.NoError(t, os.WriteFile(filepath.Join(bare, "hooks", "pre-receive"), []byte(hook), 0o755))
	m := h.create(engine.MissionSpec{Title: "refused", WriteArea: []string{"r.txt"}, Brief: "@write r.txt x\n@commit r\n@done"})

	h.until("the refusal is escalated", func() bool { return len(h.openEscalations(m.ID, "remote")) == 1 })

	esc := h.openEscalations(m.ID, "remote")[0]
	require.Equal(t, domain.RoutePerson, esc.Route)
	require.Contains(t, esc.Reason, "pushes to main need a signed-off release ticket")
	require.Contains(t, strings.Join(esc.Evidence, "\n"), "pushes to main need a signed-off release ticket")
	require.NotEqual(t, domain.LandingLanded, h.mission(m.ID).Landing)
	require.Equal(t, before, git(t, bare, "rev-parse", "main"), "the remote did not move")
}

// The leader's scheduled pass deletes the attempt branches on a remote that nothing needs —
// a landed mission's attempt, a superseded attempt, a mission no longer stored — and keeps the
// branch of a running mission's current attempt.
func TestRemote_ScheduledPassSweepsLeftoverAttemptBranches(t *testing.T) {
	h, bare := remoteHarness(t)
	landed := h.create(engine.MissionSpec{Title: "lands", WriteArea: []string{"l.txt"}, Brief: "@write l.txt l\n@commit l\n@done"})
	h.until("it lands", func() bool { return h.mission(landed.ID).Landing == domain.LandingLanded })
	running := h.create(engine.MissionSpec{Title: "runs", WriteArea: []string{"r.txt"}, Brief: "@sleep 60s\n@done"})
	h.until("its agent runs", func() bool {
		got := h.mission(running.ID)
		return got.State == domain.StateRunning && len(got.Run) > 0 && runPID(t, got) != 0
	})

	tip := strings.TrimSpace(git(t, bare, "rev-parse", "main"))
	branches := map[string]bool{ // branch → kept
		"mcp-scheduler/" + landed.ID + "/a1":              false,
		"mcp-scheduler/" + running.ID + "/a1":             true,
		"mcp-scheduler/" + running.ID + "/a7":             false,
		"mcp-scheduler/msn_01M8Y00000000000000000GONE/a1": false, // no mission can have this id
		"mcp-scheduler/msn_01M8Y000000000000000000000/a1": false, // none has this one
	}
	for b := range branches {
		git(t, bare, "update-ref", "refs/heads/"+b, tip)
	}
	rep, err := scheduler.NewKeeper(h.eng, h.wt, nil, scheduler.Config{DataDir: h.data, Retention: -1}).RunOnce(h.ctx)
	require.NoError(t, err)
	require.Equal(t, 4, rep.Unpublished, "%+v", rep)
	for b, kept := range branches {
		err := exec.Command("git", "-C", bare, "rev-parse", "--verify", "--quiet", "refs/heads/"+b).Run()
		require.Equal(t, kept, err == nil, "%s kept=%v", b, kept)
	}
	pid := runPID(t, h.mission(running.ID))
	_, err = h.eng.Cancel(h.ctx, running.ID, "test over", false, "test")
	require.NoError(t, err)
	h.until("the agent is gone", func() bool { return pid == 0 || !processAlive(pid) })
}

// In cluster mode (a node name) a completed attempt's branch is published on the remote; a
// mission whose landing conflicted lands through its repair mission, which carries its work.
// Once both are landed nothing needs either branch: the repair's is deleted by its landing, and
// the subject's by the carried landing — not left on the remote until the hourly sweep.
func TestRemote_LandingCarriedByARepairDeletesTheSubjectsBranch(t *testing.T) {
	h, bare, _ := remoteHarnessWithSwitch(t, func(_ *engine.Options, c *scheduler.Config) { c.Node = "n1" })
	first := h.create(engine.MissionSpec{Title: "first", WriteArea: []string{"first/**"},
		Brief: "@write shared.txt \"line one\\nfirst\\n\"\n@commit first\n@done"})
	second := h.create(engine.MissionSpec{Title: "second", WriteArea: []string{"second/**"},
		Brief: "@sleep 300ms\n@write shared.txt \"line one\\nsecond\\n\"\n@commit second\n@done"})
	h.until("both land", func() bool {
		return h.mission(first.ID).Landing == domain.LandingLanded && h.mission(second.ID).Landing == domain.LandingLanded
	})
	repairs, err := h.eng.ListMissions(h.ctx, engine.MissionFilter{Kind: domain.KindRepair})
	require.NoError(t, err)
	require.Len(t, repairs, 1, "one landing conflicted and was repaired")
	require.Equal(t, domain.LandingLanded, h.mission(repairs[0].ID).Landing)
	// The branches are deleted right after the landings are recorded: wait for it (the
	// hourly sweep is off in the harness, so only the landings can delete them).
	left := func() string {
		return strings.TrimSpace(git(t, bare, "for-each-ref", "--format=%(refname)", "refs/heads/mcp-scheduler/"))
	}
	h.until("no attempt branch is left on the remote once everything landed", func() bool { return left() == "" })
	git(t, bare, "fsck", "--strict", "--no-progress")
}

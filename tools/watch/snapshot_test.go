package watch

import (
	"context"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/storage/teststore"
)

// newEngine is an engine over a real store in a temporary directory, with a real git
// repository as its default repository.
func newEngine(t testing.TB) *engine.Engine {
	t.Helper()
	repo, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "--allow-empty", "-m", "start"}} {
		out, err := exec.Command("git", append([]string{"-C", repo}, args...)...).CombinedOutput()
		require.NoError(t, err, "%s", out)
	}
	return engine.New(teststore.New(t), engine.Options{DefaultRepository: repo})
}

// Load reads every section from the engine: a voyage with its missions, the running mission
// with its agent and progress line, the waiting ones with why (no loop leads: said so), the
// open escalation; the EngineSource resolves it through the engine's rule.
func TestLoad_ReadsEverySectionAndResolves(t *testing.T) {
	ctx := context.Background()
	e := newEngine(t)
	d, err := e.Dispatch(ctx, engine.VoyageSpec{Title: "handbook", Missions: []engine.MissionSpec{
		{Key: "intro", Title: "intro", WriteArea: []string{"intro.md"}},
		{Key: "chapter", Title: "chapter", WriteArea: []string{"chapter.md"}, DependsOn: []string{"intro"}},
		{Key: "doomed", Title: "doomed", WriteArea: []string{"doomed.md"}},
		{Key: "after", Title: "after doomed", WriteArea: []string{"after.md"}, DependsOn: []string{"doomed"}},
	}}, "test")
	require.NoError(t, err)
	m, err := e.Acquire(ctx, engine.AcquireRequest{AgentID: "agent-7", MissionID: d.IDs["intro"], Start: true})
	require.NoError(t, err)
	pct := 25.0
	require.NoError(t, e.Progress(ctx, domain.Fence{MissionID: m.ID, Epoch: m.Lease.Epoch}, &pct, "drafting the intro"))
	_, err = e.Cancel(ctx, d.IDs["doomed"], "not needed", false, "test")
	require.NoError(t, err)

	s, err := Load(ctx, e)
	require.NoError(t, err)
	require.Equal(t, "idle", s.Status.Loop)
	require.Len(t, s.Voyages, 1)
	require.Equal(t, d.Voyage.ID, s.Voyages[0].ID)
	require.Len(t, s.Voyages[0].Missions, 4)
	require.Len(t, s.Running, 1)
	require.Equal(t, "agent-7", s.Running[0].Agent)
	require.Equal(t, "drafting the intro", s.Running[0].Progress.Message)
	why := map[string]string{}
	for _, w := range s.Waiting {
		require.NotEmpty(t, w.Why, w.ID)
		why[w.ID] = w.Why[0].Code
	}
	require.Equal(t, engine.WhyHardDep, why[d.IDs["chapter"]])
	require.Len(t, s.Escalations, 1)
	esc := s.Escalations[0]
	require.Equal(t, []string{d.IDs["after"]}, esc.MissionIDs)

	p := Plain(s)
	for _, want := range []string{"NO SCHEDULER LEADS", d.Voyage.ID, "agent agent-7", "25% drafting the intro", esc.ID, "hard_dependency"} {
		require.Contains(t, p, want)
	}

	src := EngineSource{Engine: e, Actor: "cli:tester"}
	v, err := src.Mission(ctx, d.IDs["after"])
	require.NoError(t, err)
	require.Len(t, v.Escalations, 1)
	_, err = src.Resolve(ctx, esc.ID, "shrug")
	require.ErrorContains(t, err, "use retry, skip, cancel or acknowledge")
	res, err := src.Resolve(ctx, esc.ID, engine.ResolveSkip)
	require.NoError(t, err)
	require.Equal(t, "cli:tester", res.ResolvedBy)
	after, err := e.Mission(ctx, d.IDs["after"])
	require.NoError(t, err)
	require.Equal(t, domain.StateCancelled, after.State)
	_, err = src.Resolve(ctx, esc.ID, engine.ResolveSkip)
	require.ErrorContains(t, err, "is already resolved")

	l, err := src.Log(ctx, d.IDs["intro"])
	require.NoError(t, err)
	require.Equal(t, 1, l.Attempt)
	require.NotEmpty(t, l.Events)
}

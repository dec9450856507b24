package main

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/storage/teststore"
)

// missions show gives a failed attempt's kind with whichever summary exists: a failure with a
// kind and no summary of its own shows the attempt's summary (the reference agent's reason),
// never a bare "error: ". The decision's reason does the same.
func TestCLI_MissionsShowFailureWithoutSummary(t *testing.T) {
	s := newSandbox(t)
	m := cliJSON[domain.Mission](s, "go", "fails with a reason in its summary")
	ctx := context.Background()
	eng := engine.New(teststore.OpenAt(t, filepath.Join(s.dataDir, "mcp-scheduler.db")), engine.Options{DefaultRepository: s.repo})
	p, err := eng.BeginClaim(ctx, engine.ClaimRequest{AgentID: "test-agent"})
	require.NoError(t, err)
	c, err := p.HandOver(ctx, engine.Workspace{}, nil)
	require.NoError(t, err)
	require.Equal(t, m.ID, c.Mission.ID)
	reason := `@progress failed: percent "halfway" must be a number in 0..100`
	_, err = eng.Fail(ctx, c.Mission.Fence(), engine.FailRequest{Failure: domain.Failure{Kind: domain.FailureError}, Summary: reason, Final: true})
	require.NoError(t, err)

	out, errs, code := s.cli("missions", "show", m.ID)
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "error: "+reason)
	require.Contains(t, out, "a failure retrying cannot fix: error "+reason, "the decision's reason names it too")
}

// The attempt line: the failure's summary first, then the attempt's, then the diagnostic; a
// failure with none of them is its kind alone.
func TestAttemptSummary(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		at   domain.Attempt
		want string
	}{
		{domain.Attempt{Summary: "done"}, "done"},
		{domain.Attempt{Summary: "attempt", Failure: &domain.Failure{Kind: "test", Summary: "3 tests failed"}}, "test: 3 tests failed"},
		{domain.Attempt{Summary: "attempt said why", Failure: &domain.Failure{Kind: "error"}}, "error: attempt said why"},
		{domain.Attempt{Failure: &domain.Failure{Kind: "build", Diagnostic: "exit status 2"}}, "build: exit status 2"},
		{domain.Attempt{Failure: &domain.Failure{Kind: "crash"}}, "crash"},
	} {
		require.Equal(t, c.want, attemptSummary(c.at))
	}
}

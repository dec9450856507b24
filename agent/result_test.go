package agent

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestWorkerResultCheck(t *testing.T) {
	ok := []WorkerResult{
		{Status: StatusCompleted},
		{Status: StatusFailed, Failure: &Failure{Kind: KindTest}},
		{Status: StatusBlocked, Decision: "which API?", Failure: &Failure{Kind: KindPermission}},
		{Status: StatusCompleted, Findings: []Finding{{Message: "m"}}, Usage: &Usage{InputTokens: 1}},
		{Status: StatusCancelled},
		{Status: StatusCompleted, Verdict: VerdictMinor, Findings: []Finding{{Severity: "minor", Message: "typo"}}},
	}
	for _, r := range ok {
		require.NoError(t, r.Check(), "%+v", r)
	}
	bad := []WorkerResult{
		{},
		{Status: "done"},
		{Status: StatusFailed},
		{Status: StatusFailed, Failure: &Failure{}},
		{Status: StatusCompleted, Verdict: "great"},
		{Status: StatusBlocked, Decision: "which API?"},
		{Status: StatusCompleted, Usage: &Usage{OutputTokens: -1}},
		{Status: StatusCompleted, Findings: []Finding{{Severity: "blocker", Message: "m"}}},
	}
	for _, r := range bad {
		require.ErrorIs(t, r.Check(), ErrInvalidResult, "%+v", r)
	}
	f := ProtocolFailure(WorkerResult{Status: "done", Summary: "did it"}, bad[1].Check())
	require.Equal(t, StatusFailed, f.Status)
	require.Equal(t, KindProtocol, f.Failure.Kind)
	require.Equal(t, "did it", f.Summary)
	require.Contains(t, f.Failure.Diagnostic, `status "done"`)
	require.NoError(t, f.Check())
}

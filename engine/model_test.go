package engine_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// A model name that an agent's command line would read as an option, or that carries a
// control character, is refused wherever it enters — create, dispatch and update — naming
// the field; nothing is stored.
func TestModelPolicy_BadModelRefusedNamingTheField(t *testing.T) {
	t.Parallel()
	b := setup(t)
	forced := func(m string) domain.ModelPolicy {
		return domain.ModelPolicy{Mode: domain.ModeSchedulerForced, Model: m}
	}
	allowed := func(m ...string) domain.ModelPolicy {
		return domain.ModelPolicy{Mode: domain.ModeAgentSelect, Allowed: m}
	}
	cases := []struct {
		field  string
		policy domain.ModelPolicy
	}{
		{"model_policy.model", forced("--dangerously-skip-permissions")},
		{"model_policy.model", forced("gpt\n--yolo")},
		{"model_policy.model", domain.ModelPolicy{Model: "-p"}}, // mode inferred
		{"model_policy.allowed[1]", allowed("gpt-5.5", "-m")},
		{"model_policy.allowed[0]", allowed("a\x00b")},
	}
	for _, tc := range cases {
		_, err := b.e.CreateMission(b.ctx, engine.MissionSpec{Title: "t", ModelPolicy: tc.policy}, "t")
		var fe *domain.FieldError
		require.ErrorAs(t, err, &fe, "%+v", tc.policy)
		require.Equal(t, tc.field, fe.Field)
		require.Contains(t, fe.Problem, "use the provider's model id")

		_, err = b.e.Dispatch(b.ctx, engine.VoyageSpec{Title: "v", Missions: []engine.MissionSpec{
			{Key: "a", Title: "a"}, {Key: "b", Title: "b", ModelPolicy: tc.policy}}}, "t")
		require.ErrorAs(t, err, &fe)
		require.Equal(t, "missions[1]."+tc.field, fe.Field)
	}
	all, err := b.e.ListMissions(b.ctx, engine.MissionFilter{})
	require.NoError(t, err)
	require.Empty(t, all, "a refused create or dispatch stores nothing")

	m, err := b.e.CreateMission(b.ctx, engine.MissionSpec{Title: "t", ModelPolicy: forced("claude-opus-4-8")}, "t")
	require.NoError(t, err)
	for _, tc := range cases {
		p := tc.policy
		_, err = b.e.UpdateMission(b.ctx, m.Mission.ID, engine.MissionPatch{ModelPolicy: &p}, "t")
		var fe *domain.FieldError
		require.ErrorAs(t, err, &fe)
		require.Equal(t, tc.field, fe.Field)
	}
	got, err := b.e.GetMission(b.ctx, m.Mission.ID)
	require.NoError(t, err)
	require.Equal(t, "claude-opus-4-8", got.Mission.ModelPolicy.Model, "a refused update keeps the stored policy")
	b.verifyReplay()
}

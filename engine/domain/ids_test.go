package domain

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A malformed id is named by its kind, with where to copy a good one from.
func TestCheckID_NamesTheKindAndWhereToFindOne(t *testing.T) {
	for _, c := range []struct{ prefix, says, where string }{
		{PrefixMission, `"x" is not a mission id`, "list_missions"},
		{PrefixEscalation, `"x" is not an escalation id`, "list_escalations"},
		{PrefixVoyage, `"x" is not a voyage id`, "get_mission"},
		{PrefixAgent, `"x" is not an agent id`, "list_agents"},
	} {
		err := CheckID("id", c.prefix, "x")
		require.ErrorContains(t, err, c.says)
		require.ErrorContains(t, err, c.where)
		require.ErrorContains(t, err, c.prefix+"_01JD5Z8Q6X3V4W5Y6Z7A8B9C0D")
	}
	require.NoError(t, CheckID("id", PrefixEscalation, "esc_01JD5Z8Q6X3V4W5Y6Z7A8B9C0D"))
	require.Contains(t, (&NotFoundError{Kind: "escalation", ID: "esc_1"}).Error(), "list_escalations")
}

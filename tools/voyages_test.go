package tools

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestUpdateVoyage_RequirementsChangedAndCostLimit(t *testing.T) {
	b := setup(t, setupOpts{})
	d := ok[DispatchResult](b, "dispatch", map[string]any{"title": "v", "missions": []map[string]any{{"key": "a", "title": "a"}}})
	v := ok[VoyageResult](b, "update_voyage", map[string]any{"voyage_id": d.Voyage.ID, "requirements_changed": true, "note": "scope grew"})
	require.True(t, v.Voyage.RequirementsChanged)
	v = ok[VoyageResult](b, "update_voyage", map[string]any{"voyage_id": d.Voyage.ID, "requirements_changed": false, "cost_limit_usd": 2.5})
	require.False(t, v.Voyage.RequirementsChanged)
	require.Equal(t, 2.5, v.Voyage.CostLimitUSD)
	require.Contains(t, fails(b, "update_voyage", map[string]any{"voyage_id": d.Voyage.ID}), "changes nothing")
}

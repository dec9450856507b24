package engine_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// Mission reads the mission GetMission reads, without its details; an id that is not a
// mission id is invalid, one that names nothing not found (with its kind and id).
func TestMission_ReadsWhatGetMissionReads(t *testing.T) {
	t.Parallel()
	b := setup(t)
	x := b.create(engine.MissionSpec{Title: "x", WriteArea: []string{"api/**"}})
	m, err := b.e.Mission(b.ctx, x.ID)
	require.NoError(t, err)
	d, err := b.e.GetMission(b.ctx, x.ID)
	require.NoError(t, err)
	require.Equal(t, d.Mission, m)

	_, err = b.e.Mission(b.ctx, "msn_nope")
	require.ErrorIs(t, err, domain.ErrInvalid)
	_, err = b.e.Mission(b.ctx, "msn_01JD5Z8Q6X3V4W5Y6Z7A8B9C0D")
	var nf *domain.NotFoundError
	require.ErrorAs(t, err, &nf)
	require.Equal(t, domain.NotFoundError{Kind: "mission", ID: "msn_01JD5Z8Q6X3V4W5Y6Z7A8B9C0D"}, *nf)
}

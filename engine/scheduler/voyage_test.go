package scheduler_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// A small voyage with a dependency chain runs to completion: every mission's file lands on
// main exactly once.
func TestVoyage_ChainLandsEveryMission(t *testing.T) {
	h := newHarness(t)
	d, err := h.eng.Dispatch(h.ctx, engine.VoyageSpec{Title: "chain", Missions: []engine.MissionSpec{
		{Key: "a", Title: "write a", WriteArea: []string{"a.txt"}, Brief: "@write a.txt \"from a\\n\"\n@commit add a\n@done wrote a"},
		{Key: "b", Title: "write b", WriteArea: []string{"b.txt"}, DependsOn: []string{"a"}, Brief: "@write b.txt \"from b\\n\"\n@commit add b\n@done wrote b"},
		{Key: "c", Title: "write c", WriteArea: []string{"c.txt"}, Brief: "@write c.txt \"from c\\n\"\n@commit add c\n@done wrote c"},
	}}, "test")
	require.NoError(t, err)
	h.until("the voyage completes", func() bool { return h.voyageState(d.Voyage.ID) == domain.VoyageCompleted })
	for _, f := range []string{"a.txt", "b.txt", "c.txt"} {
		body, ok := h.file(f)
		require.True(t, ok, f)
		require.Contains(t, body, "from")
	}
	for _, id := range d.IDs {
		m := h.mission(id)
		require.Equal(t, domain.StateCompleted, m.State)
		require.Equal(t, domain.LandingLanded, m.Landing)
	}
	log := git(t, h.repo, "log", "--format=%s", "main")
	require.Equal(t, 1, countLines(log, "add a"))
	require.Equal(t, 1, countLines(log, "add b"))
}

func countLines(s, sub string) int {
	n := 0
	for _, l := range splitLines(s) {
		if l == sub {
			n++
		}
	}
	return n
}

func splitLines(s string) []string {
	var out []string
	start := 0
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

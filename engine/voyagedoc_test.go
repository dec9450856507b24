package engine_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

const (
	voyageBegin       = "<!-- voyage-transitions:begin (generated from engine/domain/voyagestate.go by UPDATE_DOCS=1 go test ./engine -run StateMachineDoc) -->"
	voyageEnd         = "<!-- voyage-transitions:end -->"
	attemptTableBegin = "<!-- attempt-endings:begin (generated from engine/domain/attemptstate.go by UPDATE_DOCS=1 go test ./engine -run StateMachineDoc) -->"
	attemptTableEnd   = "<!-- attempt-endings:end -->"
)

func voyageEdges() []string {
	var out []string
	for _, t := range domain.VoyageTransitions() {
		out = append(out, edge(string(t.From), string(t.To), t.Ops))
	}
	return out
}

func voyageDiagram() string {
	var exits []string
	for _, s := range domain.AllVoyageStates() {
		if s.Terminal() {
			exits = append(exits, string(s))
		}
	}
	return mermaid("[*] --> open : dispatch", voyageEdges(), exits)
}

func attemptTable() string {
	var b strings.Builder
	b.WriteString("| mission operation | attempt outcome |\n|---|---|\n")
	for _, e := range domain.AttemptEndings() {
		fmt.Fprintf(&b, "| `%s` | `%s` |\n", e.Op, e.Outcome)
	}
	return b.String()
}

// checkTable compares the block between begin and end in docs/state-machine.md with render's
// output, exactly (rewriting it under UPDATE_DOCS=1).
func checkTable(t *testing.T, begin, end string, render func() string) {
	t.Helper()
	path := filepath.Join("..", "docs", "state-machine.md")
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	doc := string(raw)
	i, j := strings.Index(doc, begin), strings.Index(doc, end)
	require.True(t, i >= 0 && j > i, "%s lacks the generated markers %q", path, begin)
	if os.Getenv("UPDATE_DOCS") == "1" {
		doc = doc[:i] + begin + "\n" + render() + doc[j:]
		require.NoError(t, os.WriteFile(path, []byte(doc), 0o644))
		return
	}
	require.Equal(t, render(), doc[i+len(begin)+1:j], "the table and the code disagree; run UPDATE_DOCS=1 go test ./engine -run StateMachineDoc")
}

// The voyage table's shape: terminal states have no way out, every other state has one, and
// each state is reachable from open.
func TestVoyageTransitions_Shape(t *testing.T) {
	t.Parallel()
	out := map[domain.VoyageState]int{}
	reach := map[domain.VoyageState]bool{domain.VoyageOpen: true}
	for changed := true; changed; {
		changed = false
		for _, tr := range domain.VoyageTransitions() {
			if reach[tr.From] && !reach[tr.To] {
				reach[tr.To], changed = true, true
			}
		}
	}
	for _, tr := range domain.VoyageTransitions() {
		out[tr.From]++
	}
	for _, s := range domain.AllVoyageStates() {
		require.True(t, reach[s], "voyage state %s cannot be reached from open", s)
		require.Equal(t, s.Terminal(), out[s] == 0, "voyage state %s: terminal=%v but %d moves out", s, s.Terminal(), out[s])
	}
	require.False(t, domain.CanVoyageTransition(domain.VoyageCompleted, domain.VoyageActive, "reopen"))
	require.False(t, domain.CanVoyageTransition(domain.VoyageActive, domain.VoyageOpen, "settle"))
	require.True(t, domain.CanVoyageTransition(domain.VoyageBlocked, domain.VoyageActive, "reopen"))
}

// Every outcome is reachable, and every operation that ends an attempt is a mission operation
// of the mission table that leaves a leased or running state.
func TestAttemptEndings_AreMissionOperations(t *testing.T) {
	t.Parallel()
	leaving := map[string]bool{}
	for _, tr := range domain.Transitions() {
		if tr.From.Leased() {
			for _, op := range tr.Ops {
				leaving[op] = true
			}
		}
	}
	seen := map[domain.AttemptOutcome]bool{}
	for _, e := range domain.AttemptEndings() {
		require.True(t, leaving[e.Op], "%s ends an attempt but is no mission operation out of leased or running", e.Op)
		seen[e.Outcome] = true
	}
	for _, o := range domain.AllAttemptOutcomes() {
		require.True(t, seen[o], "no operation ends an attempt as %s", o)
	}
}

package engine_test

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

const (
	voyageDiagramBegin = "<!-- voyage-transitions:begin (generated from engine/domain/voyagestate.go by UPDATE_DOCS=1 go test ./engine -run VoyageStateMachineDoc) -->"
	voyageDiagramEnd   = "<!-- voyage-transitions:end -->"
)

func voyageMermaid() string {
	var b strings.Builder
	b.WriteString("```mermaid\nstateDiagram-v2\n    [*] --> open : dispatch\n")
	for _, t := range domain.VoyageTransitions() {
		fmt.Fprintf(&b, "    %s --> %s : %s\n", t.From, t.To, strings.Join(t.Ops, ", "))
	}
	for _, s := range domain.AllVoyageStates() {
		if s.Terminal() {
			fmt.Fprintf(&b, "    %s --> [*]\n", s)
		}
	}
	b.WriteString("```\n")
	return b.String()
}

// docs/state-machine.md draws the same voyage transitions as the code's table.
func TestVoyageStateMachineDoc_AgreesWithTable(t *testing.T) {
	t.Parallel()
	path := filepath.Join("..", "docs", "state-machine.md")
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	doc := string(raw)
	i, j := strings.Index(doc, voyageDiagramBegin), strings.Index(doc, voyageDiagramEnd)
	require.True(t, i >= 0 && j > i, "%s lacks the generated voyage diagram markers", path)
	if os.Getenv("UPDATE_DOCS") == "1" {
		doc = doc[:i] + voyageDiagramBegin + "\n" + voyageMermaid() + doc[j:]
		require.NoError(t, os.WriteFile(path, []byte(doc), 0o644))
		return
	}
	var got []string
	for _, line := range strings.Split(doc[i:j], "\n") {
		if m := edgeLine.FindStringSubmatch(line); m != nil {
			got = append(got, m[1]+">"+m[2]+":"+m[3])
		}
	}
	var want []string
	for _, t := range domain.VoyageTransitions() {
		want = append(want, string(t.From)+">"+string(t.To)+":"+strings.Join(t.Ops, ", "))
	}
	sort.Strings(got)
	sort.Strings(want)
	require.Equal(t, want, got, "the voyage diagram and engine/domain/voyagestate.go disagree; run UPDATE_DOCS=1 go test ./engine -run VoyageStateMachineDoc")
}

// The table's shape: terminal states have no way out, every other state has one, and each
// state is reachable from open.
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

const (
	attemptTableBegin = "<!-- attempt-endings:begin (generated from engine/domain/attemptstate.go by UPDATE_DOCS=1 go test ./engine -run AttemptEndingsDoc) -->"
	attemptTableEnd   = "<!-- attempt-endings:end -->"
)

func attemptTable() string {
	var b strings.Builder
	b.WriteString("| mission operation | attempt outcome |\n|---|---|\n")
	for _, e := range domain.AttemptEndings() {
		fmt.Fprintf(&b, "| `%s` | `%s` |\n", e.Op, e.Outcome)
	}
	return b.String()
}

// docs/state-machine.md lists the same attempt endings as the code's table, every outcome is
// reachable, and every operation that ends an attempt is a mission operation of the mission
// table that leaves a leased or running state.
func TestAttemptEndingsDoc_AgreesWithTable(t *testing.T) {
	t.Parallel()
	path := filepath.Join("..", "docs", "state-machine.md")
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	doc := string(raw)
	i, j := strings.Index(doc, attemptTableBegin), strings.Index(doc, attemptTableEnd)
	require.True(t, i >= 0 && j > i, "%s lacks the generated attempt table markers", path)
	if os.Getenv("UPDATE_DOCS") == "1" {
		doc = doc[:i] + attemptTableBegin + "\n" + attemptTable() + doc[j:]
		require.NoError(t, os.WriteFile(path, []byte(doc), 0o644))
		return
	}
	require.Equal(t, attemptTable(), doc[i+len(attemptTableBegin)+1:j],
		"the attempt table and engine/domain/attemptstate.go disagree; run UPDATE_DOCS=1 go test ./engine -run AttemptEndingsDoc")
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

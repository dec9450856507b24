package engine_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

const (
	diagramBegin = "<!-- transitions:begin (generated from engine/domain/state.go by UPDATE_DOCS=1 go test ./engine -run StateMachineDoc) -->"
	diagramEnd   = "<!-- transitions:end -->"
	landingBegin = "<!-- landing:begin (generated from engine/domain/landingstate.go by UPDATE_DOCS=1 go test ./engine -run StateMachineDoc) -->"
	landingEnd   = "<!-- landing:end -->"
)

// edge is one drawn transition: "from>to:op, op".
func edge(from, to string, ops []string) string {
	return from + ">" + to + ":" + strings.Join(ops, ", ")
}

func missionEdges() []string {
	var out []string
	for _, t := range domain.Transitions() {
		out = append(out, edge(string(t.From), string(t.To), t.Ops))
	}
	return out
}

func landingEdges() []string {
	var out []string
	for _, t := range domain.LandingTransitions() {
		ops := make([]string, len(t.Ops))
		for i, o := range t.Ops {
			ops[i] = string(o)
		}
		out = append(out, edge(string(t.From), string(t.To), ops))
	}
	return out
}

// mermaid draws edges (from edge) as a mermaid state diagram with the given entry and exits.
func mermaid(entry string, edges, exits []string) string {
	var b strings.Builder
	b.WriteString("```mermaid\nstateDiagram-v2\n    " + entry + "\n")
	for _, e := range edges {
		from, rest, _ := strings.Cut(e, ">")
		to, ops, _ := strings.Cut(rest, ":")
		fmt.Fprintf(&b, "    %s --> %s : %s\n", from, to, ops)
	}
	for _, s := range exits {
		fmt.Fprintf(&b, "    %s --> [*]\n", s)
	}
	b.WriteString("```\n")
	return b.String()
}

func missionDiagram() string {
	var exits []string
	for _, s := range domain.AllStates() {
		if s.Terminal() {
			exits = append(exits, string(s))
		}
	}
	return mermaid("[*] --> pending : create", missionEdges(), exits)
}

func landingDiagram() string {
	var exits []string
	for _, s := range domain.AllLandingStates() {
		if s.Satisfies() || s == domain.LandingLeft {
			exits = append(exits, string(s))
		}
	}
	return mermaid("[*] --> none : create", landingEdges(), exits)
}

var edgeLine = regexp.MustCompile(`^\s+([a-z_]+) --> ([a-z_]+) : (.+)$`)

// checkDiagram compares the diagram between begin and end in docs/state-machine.md with want
// (rewriting it from render under UPDATE_DOCS=1).
func checkDiagram(t *testing.T, begin, end string, want []string, render func() string) {
	t.Helper()
	path := filepath.Join("..", "docs", "state-machine.md")
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	doc := string(raw)
	i, j := strings.Index(doc, begin), strings.Index(doc, end)
	require.True(t, i >= 0 && j > i, "%s lacks the generated diagram markers %q", path, begin)
	if os.Getenv("UPDATE_DOCS") == "1" {
		doc = doc[:i] + begin + "\n" + render() + doc[j:]
		require.NoError(t, os.WriteFile(path, []byte(doc), 0o644))
		return
	}
	var got []string
	for _, line := range strings.Split(doc[i:j], "\n") {
		if m := edgeLine.FindStringSubmatch(line); m != nil {
			got = append(got, m[1]+">"+m[2]+":"+m[3])
		}
	}
	want = append([]string(nil), want...)
	sort.Strings(got)
	sort.Strings(want)
	require.Equal(t, want, got, "the diagram and the code's table disagree; run UPDATE_DOCS=1 go test ./engine -run StateMachineDoc")
}

// docs/state-machine.md draws the same transitions as the code's tables: the mission's
// (engine/domain/state.go), the landing's (landingstate.go) and the voyage's (voyagestate.go),
// and lists the attempt endings (attemptstate.go). One test, so that UPDATE_DOCS=1 rewrites
// the file without two writers.
func TestStateMachineDoc_AgreesWithTable(t *testing.T) {
	checkDiagram(t, diagramBegin, diagramEnd, missionEdges(), missionDiagram)
	checkDiagram(t, landingBegin, landingEnd, landingEdges(), landingDiagram)
	checkDiagram(t, voyageBegin, voyageEnd, voyageEdges(), voyageDiagram)
	checkTable(t, attemptTableBegin, attemptTableEnd, attemptTable)
}

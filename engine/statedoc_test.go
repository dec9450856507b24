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

	"github.com/mcp-scheduler/mcp-scheduler/engine"
)

const (
	diagramBegin = "<!-- transitions:begin (generated from engine/state.go by UPDATE_DOCS=1 go test ./engine -run StateMachineDoc) -->"
	diagramEnd   = "<!-- transitions:end -->"
)

func mermaid() string {
	var b strings.Builder
	b.WriteString("```mermaid\nstateDiagram-v2\n    [*] --> pending : create\n")
	for _, t := range engine.Transitions() {
		fmt.Fprintf(&b, "    %s --> %s : %s\n", t.From, t.To, strings.Join(t.Ops, ", "))
	}
	for _, s := range engine.AllStates() {
		if s.Terminal() {
			fmt.Fprintf(&b, "    %s --> [*]\n", s)
		}
	}
	b.WriteString("```\n")
	return b.String()
}

var edgeLine = regexp.MustCompile(`^\s+([a-z]+) --> ([a-z]+) : (.+)$`)

// docs/state-machine.md draws the same transitions as the code's table.
func TestStateMachineDoc_AgreesWithTable(t *testing.T) {
	t.Parallel()
	path := filepath.Join("..", "docs", "state-machine.md")
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	doc := string(raw)
	i, j := strings.Index(doc, diagramBegin), strings.Index(doc, diagramEnd)
	require.True(t, i >= 0 && j > i, "%s lacks the generated diagram markers", path)
	if os.Getenv("UPDATE_DOCS") == "1" {
		doc = doc[:i] + diagramBegin + "\n" + mermaid() + doc[j:]
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
	for _, t := range engine.Transitions() {
		want = append(want, string(t.From)+">"+string(t.To)+":"+strings.Join(t.Ops, ", "))
	}
	sort.Strings(got)
	sort.Strings(want)
	require.Equal(t, want, got, "the diagram and engine/state.go disagree; run UPDATE_DOCS=1 go test ./engine -run StateMachineDoc")
}

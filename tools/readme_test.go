package tools

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/e2e/testenv"
)

const (
	toolsBegin = "<!-- BEGIN TOOLS (generated from the registry: UPDATE_README=true go test ./tools -run TestReadmeToolTable) -->"
	toolsEnd   = "<!-- END TOOLS -->"
)

// readmeToolTable renders the README's tool table from the registry: one table per group,
// each tool with the first sentence of its description and its annotations.
func readmeToolTable(ts []Tool) string {
	var b strings.Builder
	var groups []Group
	byGroup := map[Group][]Tool{}
	for _, t := range ts {
		if byGroup[t.Group] == nil {
			groups = append(groups, t.Group)
		}
		byGroup[t.Group] = append(byGroup[t.Group], t)
	}
	for _, g := range groups {
		fmt.Fprintf(&b, "\n**%s%s**\n\n| tool | what it does | annotations |\n|---|---|---|\n", strings.ToUpper(string(g[:1])), g[1:])
		for _, t := range byGroup[g] {
			a := t.Tool.Annotations
			var ann []string
			for _, f := range []struct {
				on   bool
				name string
			}{{*a.ReadOnlyHint, "RO"}, {*a.DestructiveHint, "D"}, {*a.IdempotentHint, "I"}} {
				if f.on {
					ann = append(ann, f.name)
				}
			}
			if len(ann) == 0 {
				ann = []string{"additive"}
			}
			fmt.Fprintf(&b, "| `%s` | %s | %s |\n", t.Tool.Name, firstSentence(t.Tool.Description), strings.Join(ann, " "))
		}
	}
	return b.String()
}

func firstSentence(s string) string {
	if i := strings.Index(s, ". "); i >= 0 {
		s = s[:i+1]
	}
	return strings.ReplaceAll(s, "|", "\\|")
}

// TestReadmeToolTable fails when the README's tool table no longer matches the registry.
func TestReadmeToolTable(t *testing.T) {
	path := filepath.Join(testenv.RepoRoot(), "README.md")
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	readme := string(raw)
	begin, end := strings.Index(readme, toolsBegin), strings.Index(readme, toolsEnd)
	require.True(t, begin >= 0 && end > begin, "README.md needs the markers %q and %q", toolsBegin, toolsEnd)
	want := toolsBegin + "\n" + readmeToolTable(registry()) + "\n" + toolsEnd
	got := readme[begin : end+len(toolsEnd)]
	if os.Getenv("UPDATE_README") == "true" {
		require.NoError(t, os.WriteFile(path, []byte(readme[:begin]+want+readme[end+len(toolsEnd):]), 0o644))
		return
	}
	require.Equal(t, want, got, "the README's tool table drifted from the registry: UPDATE_README=true go test ./tools -run TestReadmeToolTable")
	for _, name := range briefTools {
		require.Contains(t, got, "| `"+name+"` |")
	}
}

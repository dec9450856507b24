package engine_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
)

// Every reason code the engine declares (a Why… constant) is in HoldCodes, unless it is one
// no plan records (said when no plan decided), so that a new code reaches the metrics' list.
func TestHoldCodes_NameEveryReasonCode(t *testing.T) {
	neverHeld := []string{engine.WhyNoLeader, engine.WhyQueued}
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	var declared []string
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		require.NoError(t, err)
		ast.Inspect(file, func(n ast.Node) bool {
			vs, ok := n.(*ast.ValueSpec)
			if !ok {
				return true
			}
			for i, name := range vs.Names {
				if lit, ok := valueAt(vs, i); ok && strings.HasPrefix(name.Name, "Why") {
					declared = append(declared, lit)
				}
			}
			return true
		})
	}
	require.Contains(t, declared, engine.WhyBudget, "the parse finds the Why constants")
	codes := engine.HoldCodes()
	for _, c := range declared {
		require.True(t, slices.Contains(codes, c) || slices.Contains(neverHeld, c), "reason code %q is not in engine.HoldCodes (metriclabels.go)", c)
	}
	require.Contains(t, codes, "landing_approval", "the landing waits are hold codes too")
}

// valueAt is the string literal value of a const spec's i-th name.
func valueAt(vs *ast.ValueSpec, i int) (string, bool) {
	if i >= len(vs.Values) {
		return "", false
	}
	lit, ok := vs.Values[i].(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(lit.Value)
	return s, err == nil
}

package main

import (
	"go/build"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const modulePath = "github.com/mcp-scheduler/mcp-scheduler"

// layers says which packages of the module each package may import outside its tests
// (docs/architecture.md draws the same graph). Dependencies point down only: cmd wires
// everything; tools → engine → worktree, agent; storage implements the engine's store seam;
// engine/domain is the leaf and imports nothing of the module. A package not listed here
// fails the test until it is given its place.
var layers = map[string][]string{
	"engine/domain":     {},
	"worktree":          {"engine/domain"},
	"prompts":           {"engine/domain"},
	"agent":             {"engine/domain"},
	"agent/adapters":    {"agent", "engine/domain"},
	"agent/runner":      {"agent", "engine/domain"},
	"agent/refagent":    {"agent"},
	"engine":            {"engine/domain", "agent", "worktree"},
	"engine/planner":    {"engine", "engine/domain"},
	"engine/scheduler":  {"engine", "engine/domain", "engine/planner", "agent", "agent/adapters", "agent/runner", "worktree", "prompts"},
	"storage":           {"engine", "engine/domain"},
	"storage/storetest": {"engine", "engine/domain"},
	"tools":             {"engine", "engine/domain", "agent", "prompts"},
	"cmd/mcp-scheduler": nil, // nil: anything (it wires)
	"cmd/soak":          nil,
	"e2e":               nil,
	"e2e/modelserver":   nil,
	"e2e/testenv":       nil,
}

func TestLayering_DependenciesPointDown(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	ctx := build.Default
	ctx.BuildTags = []string{"heavy"}
	seen := 0
	err = filepath.WalkDir(root, func(dir string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		if name := d.Name(); dir != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules") {
			return filepath.SkipDir
		}
		pkg, err := ctx.ImportDir(dir, 0)
		if err != nil {
			if _, ok := err.(*build.NoGoError); ok {
				return nil
			}
			return err
		}
		rel, _ := filepath.Rel(root, dir)
		rel = filepath.ToSlash(rel)
		seen++
		allowed, known := layers[rel]
		if !known {
			t.Errorf("package %s has no place in the layer table: add it to layers (here) and to docs/architecture.md", rel)
			return nil
		}
		if allowed == nil {
			return nil
		}
		for _, imp := range pkg.Imports {
			if !strings.HasPrefix(imp, modulePath+"/") {
				continue
			}
			dep := strings.TrimPrefix(imp, modulePath+"/")
			if !slices.Contains(allowed, dep) {
				t.Errorf("%s imports %s: only %v may be imported from there (dependencies point down)", rel, dep, allowed)
			}
		}
		if rel == "engine/domain" {
			for _, imp := range append(pkg.TestImports, pkg.XTestImports...) {
				if strings.HasPrefix(imp, modulePath+"/") {
					t.Errorf("engine/domain's tests import %s: the leaf's tests need nothing of the module", imp)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if seen < 10 {
		t.Fatalf("walked %d packages under %s: the walk is broken", seen, root)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("%s is not the module root: %v", root, err)
	}
}

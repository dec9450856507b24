package main

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// sqliteOnlyTests are the test files outside storage/ that may open the SQLite backend
// directly, each with its reason: they measure SQLite itself or seed its tables with raw SQL.
// Every other test reaches the store through the seam (storage/teststore), so that a second
// backend runs them unchanged.
var sqliteOnlyTests = map[string]string{
	"engine/bench_test.go":              "seeds missions with raw SQL and measures against a raw SQLite claim",
	"engine/river_bench_test.go":        "River's SQLite driver is the reference; both run on SQLite files",
	"engine/retention_bench_test.go":    "seeds a finished history with raw SQL",
	"e2e/history_bench_test.go":         "generates a 1M-mission history with raw SQL on the binary's file",
	"engine/metrics_bench_test.go":      "seeds a 1M-mission history with raw SQL and measures against a raw count",
	"cmd/mcp-scheduler/metrics_test.go": "reads the binary's own SQLite file to check its /metrics against the store",
}

// Tests outside storage/ get their store from storage/teststore, never from storage itself
// (issue 13: every engine test runs against a backend through the seam).
func TestTests_ReachTheStoreThroughTheSeam(t *testing.T) {
	t.Parallel()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	storagePkg := strconv.Quote(modulePath + "/storage")
	seen := map[string]bool{}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel == "storage" || strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			if imp.Path.Value != storagePkg {
				continue
			}
			if _, ok := sqliteOnlyTests[rel]; ok {
				seen[rel] = true
				continue
			}
			t.Errorf("%s imports storage directly: get the store from storage/teststore (teststore.New, Open, OpenAt), or add the file to sqliteOnlyTests with the reason it must be SQLite", rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for rel := range sqliteOnlyTests {
		if !seen[rel] {
			t.Errorf("%s is listed in sqliteOnlyTests but no longer imports storage: remove it from the list", rel)
		}
	}
}

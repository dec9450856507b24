package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strings"
)

// selfCommand is how another terminal runs this very program, for the commands a command
// prints for a person to type (demo's `watch` hint): "mcp-scheduler" when that name on PATH is
// this binary; under `go run`, whose binary is a temporary build deleted when it exits (before
// anyone pastes the hint) or an entry of Go's build cache (trimmed when unused), the `go run`
// line that builds it again (goRunCommand); else this
// binary's own path. Paths are quoted for a shell when they need it (shellQuote). It is
// "mcp-scheduler" when the path cannot be told.
func selfCommand() string {
	self, err := os.Executable()
	if err != nil {
		return "mcp-scheduler"
	}
	if onPath, err := exec.LookPath("mcp-scheduler"); err == nil && sameFile(onPath, self) {
		return "mcp-scheduler"
	}
	if goRunBuild(self, os.TempDir(), os.Getenv("GOTMPDIR")) {
		wd, _ := os.Getwd()
		return goRunCommand(wd)
	}
	return shellQuote(self)
}

// goRunCache matches the directories of an executable in Go's build cache, where go run
// (Go 1.24 on) keeps the binaries it linked and runs them from the second run on:
// GOCACHE/<2 hex>/<64 hex>-d/NAME.
var goRunCache = regexp.MustCompile(`^[0-9a-f]{2}/[0-9a-f]{64}-d$`)

// goRunBuild reports whether self is a binary `go run` built: .../go-build*/b001/exe/NAME
// under the temporary directory (or GOTMPDIR, when set), or an executable of the build cache.
func goRunBuild(self string, tmpDirs ...string) bool {
	dir := filepath.Dir(self)
	if goRunCache.MatchString(filepath.ToSlash(filepath.Join(filepath.Base(filepath.Dir(dir)), filepath.Base(dir)))) {
		return true
	}
	if filepath.Base(dir) != "exe" {
		return false
	}
	for _, d := range tmpDirs {
		if d == "" {
			continue
		}
		rel, err := filepath.Rel(d, self)
		if err == nil && strings.HasPrefix(rel, "go-build") {
			return true
		}
	}
	return false
}

// goRunCommand is the `go run` line that builds this program again from any directory:
// "go -C ROOT run ./cmd/mcp-scheduler", ROOT the module's root found from wd (where go run
// was run); else "go run IMPORT_PATH", which works from inside the module.
func goRunCommand(wd string) string {
	bi, ok := debug.ReadBuildInfo()
	if !ok || bi.Path == "" {
		return "go run ./cmd/mcp-scheduler"
	}
	if root, ok := moduleRoot(wd, bi.Main.Path); ok {
		pkg := "." + strings.TrimPrefix(bi.Path, bi.Main.Path) // "./cmd/mcp-scheduler"
		return "go -C " + shellQuote(root) + " run " + pkg
	}
	return "go run " + bi.Path
}

// moduleRoot finds the directory at or above dir whose go.mod declares module.
func moduleRoot(dir, module string) (string, bool) {
	if dir == "" || module == "" {
		return "", false
	}
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil {
			return dir, goModModule(string(b)) == module
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}

// goModModule reads the module directive of a go.mod file.
func goModModule(gomod string) string {
	for line := range strings.Lines(gomod) {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "module" {
			return strings.Trim(f[1], "\"`")
		}
	}
	return ""
}

// shellQuote single-quotes s for a shell when it holds a space or another special character.
func shellQuote(s string) string {
	if strings.ContainsAny(s, " \t\n'\"\\$`*?[]{}()<>|&;#~!") {
		return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
	}
	return s
}

// sameFile reports whether paths a and b name the same file.
func sameFile(a, b string) bool {
	sa, err := os.Stat(a)
	if err != nil {
		return false
	}
	sb, err := os.Stat(b)
	return err == nil && os.SameFile(sa, sb)
}

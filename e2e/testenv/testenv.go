// Package testenv finds what tests need outside Go: the repository root, the pinned npm
// packages that .ci/run installs (Claude Code, Codex, the MCP SDK and Inspector) and a git
// identity. It is imported by tests only.
//
// Rule (README, "Every test runs"): when CI=true a missing binary or package fails the test;
// elsewhere it skips with the command that installs it.
package testenv

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

// NodePrefixEnv names the variable that points at the npm prefix holding the pinned
// packages (default: <repo root>/.cache/node, where .ci/run installs them).
const NodePrefixEnv = "MCP_SCHEDULER_NODE_PREFIX"

// InstallHint is the command that installs every pinned npm package tests use.
const InstallHint = ".ci/install-node-packages"

// RepoRoot returns the module root (the directory holding go.mod).
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// NodePrefix returns the npm prefix with the pinned packages.
func NodePrefix() string {
	if p := os.Getenv(NodePrefixEnv); p != "" {
		return p
	}
	return filepath.Join(RepoRoot(), ".cache", "node")
}

// InCI reports whether the tests run in CI (CI=true), where nothing may be skipped.
func InCI() bool { return os.Getenv("CI") == "true" }

// Require fails the test in CI, or skips it elsewhere, because what is named is missing.
func Require(t testing.TB, what string) {
	t.Helper()
	if InCI() {
		t.Fatalf("%s is missing and CI=true: nothing may be skipped; run %s", what, InstallHint)
	}
	t.Skipf("%s is missing; run %s to install it", what, InstallHint)
}

// NodeBin returns the path of an executable installed by npm under the node prefix
// (node_modules/.bin/<name>), failing or skipping as Require says when it is absent.
func NodeBin(t testing.TB, name string) string {
	t.Helper()
	p := filepath.Join(NodePrefix(), "node_modules", ".bin", name)
	if _, err := os.Stat(p); err != nil {
		Require(t, "npm binary "+name+" ("+p+")")
	}
	return p
}

// NodeModules returns <node prefix>/node_modules, failing or skipping when pkg is absent.
func NodeModules(t testing.TB, pkg string) string {
	t.Helper()
	dir := filepath.Join(NodePrefix(), "node_modules")
	if _, err := os.Stat(filepath.Join(dir, pkg, "package.json")); err != nil {
		Require(t, "npm package "+pkg)
	}
	return dir
}

// LookPath finds a program on PATH, failing or skipping as Require says when absent.
func LookPath(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		Require(t, name)
	}
	return p
}

// LookPathInstalled finds a program on PATH that a system package provides, failing in CI
// (where .ci/run installs it) or skipping elsewhere with install, the command that installs
// it.
func LookPathInstalled(t testing.TB, name, install string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err == nil {
		return p
	}
	if InCI() {
		t.Fatalf("%s is missing and CI=true: nothing may be skipped; .ci/run installs it (%s)", name, install)
	}
	t.Skipf("%s is missing; install it with %s", name, install)
	return ""
}

// GitEnv returns environment entries that give git a fixed identity and no user or system
// configuration, for tests that run git themselves.
func GitEnv() []string {
	return []string{
		"GIT_AUTHOR_NAME=mcp-scheduler test", "GIT_AUTHOR_EMAIL=test@mcp-scheduler.invalid",
		"GIT_COMMITTER_NAME=mcp-scheduler test", "GIT_COMMITTER_EMAIL=test@mcp-scheduler.invalid",
		"GIT_CONFIG_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0", "LC_ALL=C",
	}
}

// SyncBuffer is a bytes.Buffer that several goroutines may write and read (a child process's
// output, a logger) while a test reads it.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns everything written so far.
func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

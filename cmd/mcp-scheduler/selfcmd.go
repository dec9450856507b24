package main

import (
	"os"
	"os/exec"
	"strings"
)

// selfCommand is how another terminal runs this very binary, for the commands a command
// prints for a person to type (demo's `watch` hint): "mcp-scheduler" when that name on PATH is
// this binary, else this binary's own path (os.Executable; under `go run` a temporary build
// that lasts as long as this process, which is as long as the hint is of use), single-quoted for a
// shell when it holds a space or another special character. It is "mcp-scheduler" when the
// path cannot be told.
func selfCommand() string {
	self, err := os.Executable()
	if err != nil {
		return "mcp-scheduler"
	}
	if onPath, err := exec.LookPath("mcp-scheduler"); err == nil && sameFile(onPath, self) {
		return "mcp-scheduler"
	}
	if strings.ContainsAny(self, " \t\n'\"\\$`*?[]{}()<>|&;#~!") {
		return "'" + strings.ReplaceAll(self, "'", `'\''`) + "'"
	}
	return self
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

//go:build linux

package worktree

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// liveHolder scans /proc for a process that has path open (/proc/<pid>/fd) or a git process
// (command name git*) working under one of scope: its cwd, an absolute argument, or its
// GIT_DIR, GIT_WORK_TREE or GIT_COMMON_DIR. Processes whose entries cannot be read (other
// users) are skipped, so the answer covers this user's processes, which is who runs git in
// the scheduler's repositories and in the person's checkout.
func liveHolder(path string, scope []string) (who string, known bool) {
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return "", false
	}
	self := fmt.Sprint(os.Getpid())
	for _, p := range procs {
		pid := p.Name()
		if !isDigits(pid) {
			continue
		}
		dir := filepath.Join("/proc", pid)
		if hasOpen(dir, path) {
			return "pid " + pid + " (" + command(dir) + "), which has it open", true
		}
		if pid == self || !isGit(dir) {
			continue
		}
		if where := gitWorksIn(dir, scope); where != "" {
			return "git pid " + pid + " (" + command(dir) + "), working in " + where, true
		}
	}
	return "", true
}

// hasOpen reports whether the process at /proc/<pid> has a descriptor open on path.
func hasOpen(procDir, path string) bool {
	fdDir := filepath.Join(procDir, "fd")
	fds, err := os.ReadDir(fdDir)
	if err != nil {
		return false
	}
	for _, fd := range fds {
		if target, err := os.Readlink(filepath.Join(fdDir, fd.Name())); err == nil && target == path {
			return true
		}
	}
	return false
}

// isGit reports whether the process runs git or one of its helpers (git-upload-pack, ...).
func isGit(procDir string) bool {
	comm, err := os.ReadFile(filepath.Join(procDir, "comm"))
	return err == nil && bytes.HasPrefix(comm, []byte("git"))
}

// gitWorksIn returns the path under scope that a git process works in, or "".
func gitWorksIn(procDir string, scope []string) string {
	var paths []string
	if cwd, err := os.Readlink(filepath.Join(procDir, "cwd")); err == nil {
		paths = append(paths, cwd)
	}
	if cmdline, err := os.ReadFile(filepath.Join(procDir, "cmdline")); err == nil {
		for _, arg := range strings.Split(string(cmdline), "\x00") {
			_, v, ok := strings.Cut(arg, "=") // --git-dir=/x
			if !ok {
				v = arg
			}
			if filepath.IsAbs(v) {
				paths = append(paths, filepath.Clean(v))
			}
		}
	}
	if environ, err := os.ReadFile(filepath.Join(procDir, "environ")); err == nil {
		for _, kv := range strings.Split(string(environ), "\x00") {
			name, v, _ := strings.Cut(kv, "=")
			if (name == "GIT_DIR" || name == "GIT_WORK_TREE" || name == "GIT_COMMON_DIR") && filepath.IsAbs(v) {
				paths = append(paths, filepath.Clean(v))
			}
		}
	}
	for _, p := range paths {
		for _, dir := range scope {
			if under(p, dir) {
				return p
			}
		}
	}
	return ""
}

// command is the process's command line, spaces for NULs, at most 120 bytes.
func command(procDir string) string {
	cmdline, err := os.ReadFile(filepath.Join(procDir, "cmdline"))
	if err != nil || len(cmdline) == 0 {
		return "?"
	}
	s := strings.TrimSpace(strings.ReplaceAll(string(cmdline), "\x00", " "))
	if len(s) > 120 {
		s = s[:120] + "…"
	}
	return s
}

func isDigits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

//go:build linux

package worktree

import (
	"os"
	"path/filepath"
)

// openByAnyProcess scans /proc/<pid>/fd for a descriptor open on path. Processes whose fd
// directory cannot be read (other users) are skipped, so the answer covers this user's
// processes, which is who runs git in the scheduler's repositories.
func openByAnyProcess(path string) (held, known bool) {
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return false, false
	}
	for _, p := range procs {
		if !isDigits(p.Name()) {
			continue
		}
		fdDir := filepath.Join("/proc", p.Name(), "fd")
		fds, err := os.ReadDir(fdDir)
		if err != nil {
			continue
		}
		for _, fd := range fds {
			if target, err := os.Readlink(filepath.Join(fdDir, fd.Name())); err == nil && target == path {
				return true, true
			}
		}
	}
	return false, true
}

func isDigits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

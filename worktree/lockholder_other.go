//go:build !linux

package worktree

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"time"
)

// liveHolder asks lsof (present on macOS) whether a process has path open, and for the
// working directories of the git processes (lsof -c git -d cwd), which must not lie under
// scope. Without lsof the answer is unknown and no lock is removed.
func liveHolder(path string, scope []string) (who string, known bool) {
	lsof, err := exec.LookPath("lsof")
	if err != nil {
		return "", false
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, ok := lsofRun(ctx, lsof, "-t", "--", path)
	if !ok {
		return "", false
	}
	if pids := strings.Fields(string(out)); len(pids) > 0 {
		return "pid " + pids[0] + ", which has it open", true
	}
	out, ok = lsofRun(ctx, lsof, "-a", "-c", "git", "-d", "cwd", "-Fpn")
	if !ok {
		return "", false
	}
	pid := ""
	for _, line := range strings.Split(string(out), "\n") {
		switch {
		case strings.HasPrefix(line, "p"):
			pid = line[1:]
		case strings.HasPrefix(line, "n"):
			for _, dir := range scope {
				if under(line[1:], dir) {
					return "git pid " + pid + ", working in " + line[1:], true
				}
			}
		}
	}
	return "", true
}

// lsofRun runs lsof; exit status 1 means "nothing found" (empty output, ok).
func lsofRun(ctx context.Context, lsof string, args ...string) ([]byte, bool) {
	out, err := exec.CommandContext(ctx, lsof, args...).Output()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return out, true
	case errors.As(err, &ee) && ee.ExitCode() == 1:
		return nil, true
	default:
		return nil, false
	}
}

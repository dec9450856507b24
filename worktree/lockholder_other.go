//go:build !linux

package worktree

import (
	"context"
	"errors"
	"os/exec"
	"time"
)

// openByAnyProcess asks lsof (present on macOS) whether a process has path open. Without lsof
// the answer is unknown and the caller falls back to a longer age threshold.
func openByAnyProcess(path string) (held, known bool) {
	lsof, err := exec.LookPath("lsof")
	if err != nil {
		return false, false
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, lsof, "-t", "--", path).Output()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return len(out) > 0, true
	case errors.As(err, &ee) && ee.ExitCode() == 1:
		return false, true
	default:
		return false, false
	}
}

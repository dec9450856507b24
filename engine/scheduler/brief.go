package scheduler

import (
	"fmt"
	"os"
	"path/filepath"
)

// writeBrief writes the brief into <workspace>/.mcp-scheduler/brief.md (excluded from git by
// the one pattern worktree puts in info/exclude).
func writeBrief(workspace, brief string) error {
	dir := filepath.Join(workspace, ".mcp-scheduler")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("write brief: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "brief.md"), []byte(brief), 0o600); err != nil {
		return fmt.Errorf("write brief: %w", err)
	}
	return nil
}

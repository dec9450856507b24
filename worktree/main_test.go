package worktree

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

// TestMain runs the helper process modes (the test binary re-executed with
// WORKTREE_TEST_HELPER set, see helperproc_test.go) and otherwise the tests under goleak.
func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		os.Exit(runHelper(mode))
	}
	goleak.VerifyTestMain(m)
}

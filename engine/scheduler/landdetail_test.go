package scheduler

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/worktree"
)

// The stale git locks a landing removed from the person's checkout are in the landing's
// record (and so in its event), before git's own explanation.
func TestLandingDetail_NamesTheClearedLocks(t *testing.T) {
	require.Equal(t, "", landingDetail(worktree.Landing{}))
	require.Equal(t, "checks said no", landingDetail(worktree.Landing{CheckOutput: "checks said no"}))
	require.Equal(t, "removed stale git locks left by a killed git: /r/.git/HEAD.lock, /r/.git/index.lock\ngit said",
		landingDetail(worktree.Landing{Detail: "git said", ClearedLocks: []string{"/r/.git/HEAD.lock", "/r/.git/index.lock"}}))
}

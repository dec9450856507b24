package main

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine/scheduler"
	"github.com/mcp-scheduler/mcp-scheduler/worktree"
)

// A remote repository is known by its name (given, or derived from the URL): missions may
// name it, the loop's policies and the workspace manager's remotes use it.
func TestConfig_RemoteRepositoriesAreKnownByName(t *testing.T) {
	t.Parallel()
	body := "[[repositories]]\nremote = \"ssh://git@host/team/shop.git\"\ntarget_branch = \"trunk\"\nlanding = \"approval\"\n" +
		"[[repositories]]\nremote = \"https://host/other/shop.git\"\nname = \"shop-web\"\n"
	c, err := loadConfig(writeConfig(t, body), true, envOf(map[string]string{"HOME": "/h"}))
	require.NoError(t, err)
	require.NoError(t, c.validate())
	require.Equal(t, []worktree.Remote{{Name: "shop", URL: "ssh://git@host/team/shop.git"},
		{Name: "shop-web", URL: "https://host/other/shop.git"}}, c.remotes())
	rc, ok := c.repository("shop")
	require.True(t, ok)
	require.Equal(t, "trunk", rc.TargetBranch)

	repos, err := newRepositories(context.Background(), &c, t.TempDir())
	require.NoError(t, err)
	for _, name := range []string{"shop", "shop-web"} {
		got, err := repos.resolve(name)
		require.NoError(t, err)
		require.Equal(t, name, got)
	}
	_, err = repos.resolve("shopp")
	require.ErrorContains(t, err, `"shopp" is neither an absolute path nor the name of a configured remote repository (shop, shop-web)`)

	a := &app{cfg: c, log: slog.New(slog.DiscardHandler)}
	pol := a.schedulerConfig(context.Background()).Repositories
	require.Len(t, pol, 2)
	require.Equal(t, "shop", pol[0].Path)
	require.Equal(t, "trunk", pol[0].TargetBranch)
	require.Equal(t, "approval", pol[0].Landing)
}

// scheduler.landing_lock_ttl reaches the loop's configuration; without it the lock runs for
// the default minute.
func TestConfig_LandingLockTTLReachesTheLoop(t *testing.T) {
	t.Parallel()
	for body, want := range map[string]time.Duration{"": scheduler.DefaultLandingLockTTL, "[scheduler]\nlanding_lock_ttl = \"7m\"\n": 7 * time.Minute} {
		c, err := loadConfig(writeConfig(t, body), true, envOf(map[string]string{"HOME": "/h"}))
		require.NoError(t, err)
		require.NoError(t, c.validate())
		a := &app{cfg: c, log: slog.New(slog.DiscardHandler)}
		require.Equal(t, want, a.schedulerConfig(context.Background()).LandingLockTTL, "config %q", body)
	}
}

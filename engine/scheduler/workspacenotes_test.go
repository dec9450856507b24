package scheduler_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/engine/scheduler"
	"github.com/mcp-scheduler/mcp-scheduler/worktree"
)

// What a workspace holds differently from the person's checkout (issue 29: a submodule left
// empty) reaches the agent's brief, the claim's answer, the workspace record and get_mission.
// On main before this change nobody was told that lib/ was empty.
func TestWorkspaceNotes_AnEmptySubmoduleIsSaidInTheBriefTheClaimAndGetMission(t *testing.T) {
	h := newHarness(t, withConfig(func(c *scheduler.Config) { c.Profiles = nil }))
	// A submodule whose module store was never made (a clone without `git submodule update`).
	require.NoError(t, os.WriteFile(filepath.Join(h.repo, ".gitmodules"),
		[]byte("[submodule \"lib\"]\n\tpath = lib\n\turl = /nonexistent/lib.git\n"), 0o644))
	git(t, h.repo, "update-index", "--add", "--cacheinfo", "160000,"+strings.Repeat("ab", 20)+",lib")
	git(t, h.repo, "add", ".gitmodules")
	git(t, h.repo, "commit", "-q", "-m", "a submodule nobody initialised")
	m := h.create(engine.MissionSpec{Title: "work beside a submodule", WriteArea: []string{"a.txt"}})

	c := h.claim("codex")
	require.Equal(t, m.ID, c.Mission.ID)
	require.Len(t, c.Workspace.Notes, 1, "%q", c.Workspace.Notes)
	note := c.Workspace.Notes[0]
	require.Contains(t, note, "submodule lib is empty: the repository has no local copy of it")
	brief, err := os.ReadFile(filepath.Join(c.Workspace.Path, ".mcp-scheduler", "brief.md"))
	require.NoError(t, err)
	require.Contains(t, string(brief), "## About this workspace\n\n- "+note+"\n")

	rec, err := h.eng.Workspace(h.ctx, m.ID, 1)
	require.NoError(t, err)
	require.Equal(t, []string{note}, rec.Notes, "stored with the workspace record")
	d, err := h.eng.GetMission(h.ctx, m.ID)
	require.NoError(t, err)
	require.Len(t, d.Workspaces, 1)
	require.Equal(t, []string{note}, d.Workspaces[0].Notes, "get_mission shows them")
	_, err = h.eng.Heartbeat(h.ctx, c.Mission.Fence())
	require.NoError(t, err)
}

// A workspace's GitConfig (the LFS filter off when git-lfs is not on the scheduler's PATH)
// reaches the agent as GIT_CONFIG_COUNT/KEY/VALUE, which a real git reads.
func TestMissionVars_GitConfigReachesTheAgentsGit(t *testing.T) {
	ws := worktree.Workspace{Path: t.TempDir(), Branch: "b",
		GitConfig: []string{"filter.lfs.process=", "filter.lfs.required=false", "core.x=a=b"}}
	vars := scheduler.MissionVars(&domain.Mission{ID: "msn_x", Attempt: 1}, ws)
	require.Equal(t, "3", vars["GIT_CONFIG_COUNT"])
	require.Equal(t, "filter.lfs.process", vars["GIT_CONFIG_KEY_0"])
	require.Equal(t, "", vars["GIT_CONFIG_VALUE_0"])
	require.Equal(t, "core.x", vars["GIT_CONFIG_KEY_2"])
	require.Equal(t, "a=b", vars["GIT_CONFIG_VALUE_2"])

	cmd := exec.Command("git", "config", "--get", "filter.lfs.required")
	cmd.Dir = ws.Path
	cmd.Env = os.Environ()
	for k, v := range vars {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	out, err := cmd.Output()
	require.NoError(t, err)
	require.Equal(t, "false", strings.TrimSpace(string(out)))

	none := scheduler.MissionVars(&domain.Mission{ID: "msn_x", Attempt: 1}, worktree.Workspace{Path: ws.Path})
	require.NotContains(t, none, "GIT_CONFIG_COUNT")
}

package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/e2e/testenv"
)

// A pull-mode agent on "another host" (a clone of its own, nothing of the server's disk)
// claims a mission of a repository named by a git remote with workspace remote_branch: it gets
// the remote's URL and the attempt's branch, no path, and a brief saying to fetch and push.
// Completing before pushing is refused (nothing recorded, the lease kept); after it pushed its
// commit the completion is accepted and the landing lands the pushed branch on the remote's
// main, then deletes the branch from the remote. A remote_branch claim naming a local
// repository, or something that is no repository name at all (B32), is refused with what to do.
func TestPull_RemoteBranchClaimLandsWhatTheAgentPushed(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	remote := serveBareRemote(t, s)
	writeSandboxConfig(t, s, remote.config(remote.url))
	p, base := s.startHTTP(nil)
	defer p.kill()
	ctx, cancel := context.WithDeadline(context.Background(), testenv.WaitDeadline(t))
	defer cancel()
	mc := mcpHTTPClient(t, base)

	isErr, text := callArgs(t, mc, "claim_mission", map[string]any{"agent_id": "far-1", "workspace": "remote_branch", "repository": s.repo})
	require.True(t, isErr, text)
	require.Contains(t, text, "is a local repository: it has no remote to hold the attempt's branch")
	isErr, text = callArgs(t, mc, "claim_mission", map[string]any{"agent_id": "far-1", "workspace": "remote_branch", "repository": "--upload-pack=touch /tmp/x"})
	require.True(t, isErr, text)
	require.Contains(t, text, `"--upload-pack=touch /tmp/x" is neither the name of a repository named by a git remote nor an absolute path`)

	created := callJSON(t, ctx, mc, "create_mission", map[string]any{"title": "far work", "repository": "shop", "write_area": []string{"far.txt"}})
	var cm struct {
		Mission struct{ ID string } `json:"mission"`
	}
	require.NoError(t, json.Unmarshal([]byte(created), &cm))
	claimed := callJSON(t, ctx, mc, "claim_mission", map[string]any{"agent_id": "far-1", "workspace": "remote_branch", "repository": "shop"})
	var c struct {
		Claimed   bool  `json:"claimed"`
		Epoch     int64 `json:"epoch"`
		Workspace struct {
			Path      string `json:"path"`
			Branch    string `json:"branch"`
			RemoteURL string `json:"remote_url"`
		} `json:"workspace"`
		Brief string `json:"brief"`
	}
	require.NoError(t, json.Unmarshal([]byte(claimed), &c), claimed)
	require.True(t, c.Claimed, claimed)
	require.Empty(t, c.Workspace.Path, "no directory of the server's is handed out")
	require.Equal(t, remote.url, c.Workspace.RemoteURL, claimed)
	require.Equal(t, "mcp-scheduler/"+cm.Mission.ID+"/a1", c.Workspace.Branch)
	require.Contains(t, c.Brief, "git push "+remote.url+" HEAD:refs/heads/"+c.Workspace.Branch)

	far := filepath.Join(t.TempDir(), "far")
	agentGit := func(dir string, args ...string) {
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = dir, s.env
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "git %v: %s", args, out)
	}
	agentGit(filepath.Dir(far), "clone", "-q", "--branch", c.Workspace.Branch, remote.url, far)
	require.NoError(t, os.WriteFile(filepath.Join(far, "far.txt"), []byte("made far away\n"), 0o644))
	agentGit(far, "add", "far.txt")
	agentGit(far, "commit", "-q", "-m", "far work")

	done := map[string]any{"mission_id": cm.Mission.ID, "epoch": c.Epoch, "summary": "done far away"}
	isErr, text = callArgs(t, mc, "complete_mission", done)
	require.True(t, isErr, text)
	require.Contains(t, text, "nothing was pushed to branch "+c.Workspace.Branch)
	require.Contains(t, text, "your lease is kept")

	agentGit(far, "push", "-q", remote.url, "HEAD:refs/heads/"+c.Workspace.Branch)
	isErr, text = callArgs(t, mc, "complete_mission", done)
	require.False(t, isErr, text)
	testenv.WaitFor(t, "the pushed work to land on the remote", func() bool {
		out, err := exec.Command("git", "-C", remote.dir, "show", "main:far.txt").CombinedOutput()
		return err == nil && strings.TrimSpace(string(out)) == "made far away"
	})
	testenv.WaitFor(t, "the attempt's branch to be deleted from the remote", func() bool {
		return strings.TrimSpace(remote.git(t, "for-each-ref", "refs/heads/mcp-scheduler/")) == ""
	})
	remote.git(t, "fsck", "--strict", "--no-progress")
}

// callArgs calls a tool with arguments and returns whether it was an isError result and its
// text.
func callArgs(t *testing.T, c interface {
	CallTool(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error)
}, name string, args map[string]any) (bool, string) {
	t.Helper()
	ctx, cancel := context.WithDeadline(context.Background(), testenv.WaitDeadline(t))
	defer cancel()
	var req mcp.CallToolRequest
	req.Params.Name, req.Params.Arguments = name, args
	res, err := c.CallTool(ctx, req)
	require.NoError(t, err, name)
	var text strings.Builder
	for _, ct := range res.Content {
		if tc, ok := ct.(mcp.TextContent); ok {
			text.WriteString(tc.Text)
		}
	}
	return res.IsError, text.String()
}

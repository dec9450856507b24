package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/e2e/testenv"
	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/scheduler"
)

// Repository shapes (issue 29, bug cases B66–B68): the built binary serves one real repository
// over stdio to an mcp-go client, with the reference agent as its only profile; `cleanup` is
// the binary's own command on the same data directory while the server runs, as a person
// would run it.

// shapeServer is `mcp-scheduler serve` on one repository.
type shapeServer struct {
	t         *testing.T
	ctx       context.Context
	root      string // private temporary directory (real path)
	repo      string
	data      string
	env       []string
	serverLog string
	c         *client.Client
}

// startShapeServer starts serve in repo (which must exist) with repoCfg added to its
// [[repositories]] entry.
func startShapeServer(t *testing.T, root, repo string, repoCfg map[string]any) *shapeServer {
	t.Helper()
	s := &shapeServer{t: t, root: root, repo: repo, data: filepath.Join(root, "data"), serverLog: filepath.Join(root, "server.stderr")}
	entry := map[string]any{"path": repo}
	for k, v := range repoCfg {
		entry[k] = v
	}
	cfg := filepath.Join(root, "config.toml")
	writeTOML(t, cfg, map[string]any{
		"log_level": "debug", "scheduler": map[string]any{"tick": "250ms", "max_concurrency": 4},
		// The machine's load must not run the agents one at a time: two of them wait (@hang).
		"resources":    map[string]any{"max_load_per_cpu": 0.0, "min_free_memory_mb": 0, "min_free_disk_mb": 0},
		"repositories": []map[string]any{entry},
		"profiles": []map[string]any{{"name": "reference", "runtime": "ndjson", "command": []string{"{mcp_scheduler}", "reference-agent"},
			"env":             []string{"PATH", "HOME", "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "GIT_CONFIG_NOSYSTEM"},
			"max_concurrency": 4}},
	})
	s.env = append(testenv.GitEnv(), "PATH="+os.Getenv("PATH"), "HOME="+root, "NO_COLOR=1",
		"MCP_SCHEDULER_CONFIG="+cfg, "MCP_SCHEDULER_DATA_DIR="+s.data)
	ctx, cancel := context.WithTimeout(context.Background(), WorkTimeout(t))
	t.Cleanup(cancel)
	t.Cleanup(func() { testenv.KillAgentsOf(s.data) }) // after the server stopped (cleanups run last first)
	s.ctx = ctx
	s.c = startStdioClient(t, ctx, repo, s.env, s.serverLog)
	return s
}

// dispatch dispatches one voyage and returns the mission ids by key.
func (s *shapeServer) dispatch(title string, missions []map[string]any) map[string]string {
	s.t.Helper()
	d := callTool(s.t, s.ctx, s.c, "dispatch", map[string]any{"title": title, "missions": missions})
	var out struct{ IDs map[string]string }
	require.NoError(s.t, json.Unmarshal(d, &out), "%s", d)
	return out.IDs
}

// shapeView is what the tests read of get_mission.
type shapeView struct {
	Mission struct {
		ID, State, Landing string
	}
	Landings []struct {
		Status       string
		ChangedFiles []string `json:"changed_files"`
		Detail       string
	}
	Workspaces []struct {
		Path, Branch string
		BaseCommit   string `json:"base_commit"`
		Notes        []string
	}
	WhyNotRunning []struct {
		Code, Message string
	} `json:"why_not_running"`
}

// shapeEscalation is what the tests read of list_escalations.
type shapeEscalation struct {
	Kind, Route, Reason string
	Evidence            []string
}

// escalations lists the open escalations naming a mission.
func (s *shapeServer) escalations(missionID string) []shapeEscalation {
	s.t.Helper()
	raw := callTool(s.t, s.ctx, s.c, "list_escalations", map[string]any{"mission_id": missionID})
	var out struct{ Escalations []shapeEscalation }
	require.NoError(s.t, json.Unmarshal(raw, &out), "%s", raw)
	return out.Escalations
}

// runRecord reads a mission's run record from the store (after the server stopped).
func (s *shapeServer) runRecord(missionID string) scheduler.RunRecord {
	s.t.Helper()
	st, closeDB := openStore(s.t, s.data)
	defer closeDB()
	d, err := engine.New(st, engine.Options{}).GetMission(context.Background(), missionID)
	require.NoError(s.t, err)
	var rec scheduler.RunRecord
	require.NoError(s.t, json.Unmarshal(d.Mission.Run, &rec))
	return rec
}

func (s *shapeServer) mission(id string) shapeView {
	s.t.Helper()
	raw := callTool(s.t, s.ctx, s.c, "get_mission", map[string]any{"mission_id": id})
	var m shapeView
	require.NoError(s.t, json.Unmarshal(raw, &m), "%s", raw)
	return m
}

// waitMission waits until cond holds for the mission, and returns it then.
func (s *shapeServer) waitMission(id, what string, cond func(shapeView) bool) shapeView {
	s.t.Helper()
	var m shapeView
	testenv.WaitForState(s.t, what, func() bool {
		m = s.mission(id)
		if cond(m) {
			return true
		}
		if m.Mission.State == "failed" || m.Mission.State == "blocked" {
			raw := callTool(s.t, s.ctx, s.c, "get_mission", map[string]any{"mission_id": id})
			require.FailNow(s.t, "mission "+m.Mission.State+" while waiting for "+what, "%s", raw)
		}
		return false
	}, func() string {
		log, _ := os.ReadFile(s.serverLog)
		return fmt.Sprintf("mission %s: state %s landing %s landings %+v\nserver log:\n%s", id, m.Mission.State, m.Mission.Landing,
			m.Landings, tail(string(log), 20000))
	})
	return m
}

// workspace is the path of the mission's latest workspace.
func (m shapeView) workspace(t *testing.T) string {
	t.Helper()
	require.NotEmpty(t, m.Workspaces, "mission %s has a workspace", m.Mission.ID)
	return m.Workspaces[len(m.Workspaces)-1].Path
}

// cleanup runs `mcp-scheduler cleanup --older-than 1s --json` and returns the repository's
// report.
func (s *shapeServer) cleanup() scheduler.CleanupReport {
	s.t.Helper()
	cmd := exec.CommandContext(s.ctx, binary, "cleanup", "--older-than", "1s", "--json")
	cmd.Dir, cmd.Env = s.repo, s.env
	out, err := cmd.Output()
	var stderr string
	if ee, ok := err.(*exec.ExitError); ok {
		stderr = string(ee.Stderr)
	}
	require.NoError(s.t, err, "cleanup: %s%s", out, stderr)
	var reps []scheduler.CleanupReport
	require.NoError(s.t, json.Unmarshal(out, &reps), "%s", out)
	require.Len(s.t, reps, 1, "%s", out)
	require.Empty(s.t, reps[0].Error)
	return reps[0]
}

// cleanupUntil runs cleanup until done says its report is the one the test waits for (an
// entry's last activity must be a second old before cleanup may remove it).
func (s *shapeServer) cleanupUntil(what string, done func(scheduler.CleanupReport) bool) scheduler.CleanupReport {
	s.t.Helper()
	var rep scheduler.CleanupReport
	testenv.WaitForState(s.t, what, func() bool {
		rep = s.cleanup()
		return done(rep)
	}, func() string { return fmt.Sprintf("last cleanup report: %+v", rep.Report) })
	return rep
}

// closeServer stops the server (its stdin closes) and waits for the client to be done.
func (s *shapeServer) closeServer() {
	s.t.Helper()
	require.NoError(s.t, s.c.Close())
}

package refagent

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
)

// A reviewer runs only the lines addressed to it, even from a quoted brief, and approves
// when none are.
func TestRoles_ReviewerRunsAddressedLines(t *testing.T) {
	quoted := "Review mission m-1.\n\n> @write a.txt never run by the reviewer\n> @review verdict minor \"rename x to y\"\n"
	r := startRun(t, nil, &agent.Start{MissionID: "r-1", Attempt: 1, Epoch: 1, Kind: "review", Brief: quoted, Workspace: t.TempDir()})
	msgs, code := r.finish(t)
	require.Equal(t, ExitOK, code)
	res := lastResult(t, msgs)
	require.Equal(t, agent.VerdictMinor, res.Verdict)
	require.Equal(t, "rename x to y", res.Findings[0].Message)

	r = startRun(t, nil, &agent.Start{MissionID: "r-2", Attempt: 1, Epoch: 1, Kind: "review", Brief: "> @write a.txt x", Workspace: t.TempDir()})
	msgs, _ = r.finish(t)
	require.Equal(t, agent.VerdictApproved, lastResult(t, msgs).Verdict)
}

// A work mission never runs quoted directives.
func TestRoles_WorkIgnoresQuotedDirectives(t *testing.T) {
	ws := gitRepo(t)
	r := startRun(t, nil, &agent.Start{MissionID: "w-1", Attempt: 1, Epoch: 1, Kind: "work", Title: "t",
		Brief: "> @fail test never\n@review verdict severe not for me\n@write own.txt mine\n@commit own\n@done", Workspace: ws})
	msgs, code := r.finish(t)
	require.Equal(t, ExitOK, code)
	require.Equal(t, agent.StatusCompleted, lastResult(t, msgs).Status)
}

// A repairer with no script resolves conflict markers keeping both sides and concludes the
// merge with a commit.
func TestRoles_RepairResolvesConflictsKeepingBothSides(t *testing.T) {
	ws := gitRepo(t)
	gitIn(t, ws, "checkout", "-q", "-b", "theirs")
	require.NoError(t, os.WriteFile(filepath.Join(ws, "README.md"), []byte("repo\ntheir line\n"), 0o644))
	gitIn(t, ws, "commit", "-qam", "theirs")
	gitIn(t, ws, "checkout", "-q", "main")
	require.NoError(t, os.WriteFile(filepath.Join(ws, "README.md"), []byte("repo\nour line\n"), 0o644))
	gitIn(t, ws, "commit", "-qam", "ours")
	cmd := gitCmd(ws, "merge", "theirs")
	require.Error(t, cmd.Run(), "the merge conflicts")

	r := startRun(t, nil, &agent.Start{MissionID: "fix-1", Attempt: 1, Epoch: 1, Kind: "repair", Brief: "fix it", Workspace: ws})
	msgs, code := r.finish(t)
	require.Equal(t, ExitOK, code)
	res := lastResult(t, msgs)
	require.Equal(t, agent.StatusCompleted, res.Status)
	require.Equal(t, "resolved the conflicts in README.md, keeping both sides, and committed the merge", res.Summary)
	b, err := os.ReadFile(filepath.Join(ws, "README.md"))
	require.NoError(t, err)
	require.Equal(t, "repo\nour line\ntheir line\n", string(b))
	require.Equal(t, "", gitIn(t, ws, "status", "--porcelain"))
	require.Contains(t, gitIn(t, ws, "log", "-1", "--format=%P"), " ", "the merge was concluded with two parents")
}

// A repairer with no script and nothing to resolve (a repair for failed checks, say) says so
// and commits nothing, instead of claiming it resolved conflicts.
func TestRoles_RepairWithNoConflictsSaysSo(t *testing.T) {
	ws := gitRepo(t)
	head := gitIn(t, ws, "rev-parse", "HEAD")
	r := startRun(t, nil, &agent.Start{MissionID: "fix-2", Attempt: 1, Epoch: 1, Kind: "repair", Brief: "the checks failed", Workspace: ws})
	msgs, code := r.finish(t)
	require.Equal(t, ExitOK, code)
	res := lastResult(t, msgs)
	require.Equal(t, agent.StatusCompleted, res.Status)
	require.Equal(t, "no conflicts to resolve (git reports no unmerged files): changed nothing", res.Summary)
	require.Empty(t, res.Evidence, "no commit")
	require.Equal(t, head, gitIn(t, ws, "rev-parse", "HEAD"))
}

// agent.yield stops the script at its next step with task.yield and a checkpoint that resumes
// after the steps already done.
func TestYieldRequest_StopsWithCheckpoint(t *testing.T) {
	ws := t.TempDir()
	r := startRun(t, nil, &agent.Start{MissionID: "y-1", Attempt: 1, Epoch: 1,
		Brief: "@write one.txt 1\n@log info ready\n@sleep 60s\n@write two.txt 2\n@done", Workspace: ws})
	for r.next(t).Message != "ready" {
	}
	r.send(t, agent.YieldRequest{Type: agent.TypeYieldRequest, Reason: "urgent work"})
	msgs, code := r.finish(t)
	require.Equal(t, ExitOK, code)
	last := msgs[len(msgs)-1]
	require.Equal(t, agent.TypeYield, last.Type)
	var cp checkpointBody
	require.NoError(t, json.Unmarshal(last.Checkpoint, &cp))
	require.Equal(t, 2, cp.Step, "the interrupted @sleep runs again on resume")
	require.NoFileExists(t, filepath.Join(ws, "two.txt"))
}

func TestKeepBothSides(t *testing.T) {
	in := "a\n<<<<<<< HEAD\nours\n||||||| base\nold\n=======\ntheirs\n>>>>>>> branch\nz\n"
	require.Equal(t, "a\nours\ntheirs\nz\n", string(keepBothSides([]byte(in))))
}

func gitCmd(dir string, args ...string) *exec.Cmd {
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.invalid",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.invalid", "GIT_CONFIG_NOSYSTEM=1", "LC_ALL=C")
	return cmd
}

func TestFlaky_FailsOnlyOnEarlyAttempts(t *testing.T) {
	for attempt, want := range map[int]string{1: agent.StatusFailed, 2: agent.StatusFailed, 3: agent.StatusCompleted} {
		r := startRun(t, nil, &agent.Start{MissionID: "f", Attempt: attempt, Epoch: 1, Brief: "@flaky 2 test \"flaky test\"\n@done", Workspace: t.TempDir()})
		msgs, _ := r.finish(t)
		require.Equal(t, want, lastResult(t, msgs).Status, "attempt %d", attempt)
	}
}

package runner

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
	"github.com/mcp-scheduler/mcp-scheduler/e2e/testenv"
)

func TestLaunch_DefaultPlanEditsAndCommits(t *testing.T) {
	r := newRunner(t, "")
	ws := gitRepo(t, "")
	p := launch(t, r, refSpec(t, r, "m1", ws, "Add a greeting file\nmore prose"))
	evs, out := collect(t, p)

	require.Equal(t, agent.StatusCompleted, out.Result.Status, "%+v", out.Result)
	require.Equal(t, []string{"m1.md"}, out.Result.Artifacts)
	require.True(t, out.Exit.Known)
	require.Equal(t, 0, out.Exit.Code)
	require.Empty(t, out.Exit.Reason)
	require.Len(t, messages(evs, agent.TypeResult), 1)
	for _, ev := range evs {
		require.True(t, ev.FromAgent())
		require.Positive(t, ev.Size)
		require.False(t, ev.Time.IsZero())
	}
	b, err := os.ReadFile(filepath.Join(ws, "m1.md"))
	require.NoError(t, err)
	require.Equal(t, "Add a greeting file\n", string(b))
	require.Contains(t, git(t, ws, "log", "-1", "--format=%s"), "m1: test m1")
	require.Empty(t, strings.TrimSpace(git(t, ws, "status", "--porcelain")))

	// The brief was written for the agent, privately; the attempt's files exist.
	st, err := os.Stat(filepath.Join(ws, ".mcp-scheduler", "brief.md"))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), st.Mode().Perm())
	for _, f := range []string{FileStdout, FileStderr, FilePID, FileExit} {
		require.FileExists(t, filepath.Join(p.spec.AttemptDir, f))
	}
	requireGone(t, p.PID())
	requireNoZombieChildren(t)
}

func TestLaunch_HeartbeatsArriveWhileWorking(t *testing.T) {
	r := newRunner(t, "")
	ws := t.TempDir()
	p := launch(t, r, refSpec(t, r, "hb", ws, "@heartbeat 50ms\n@sleep 600ms\n@done"))
	evs, out := collect(t, p)
	require.Equal(t, agent.StatusCompleted, out.Result.Status)
	require.GreaterOrEqual(t, len(messages(evs, agent.TypeHeartbeat)), 3, summarize(evs))
}

func TestLaunch_CrashWithoutResultFailsAsCrash(t *testing.T) {
	r := newRunner(t, "")
	p := launch(t, r, refSpec(t, r, "crash", t.TempDir(), "@log info about to crash\n@crash 3"))
	_, out := collect(t, p)
	require.True(t, out.Exit.Known)
	require.Equal(t, 3, out.Exit.Code)
	require.Equal(t, agent.StatusFailed, out.Result.Status)
	require.Equal(t, agent.KindCrash, out.Result.Failure.Kind)
}

func TestLaunch_ResultBreakingProtocolBecomesProtocolFailure(t *testing.T) {
	r := newRunner(t, "")
	// Reported by the agent: the ndjson adapter turns it into a protocol failure.
	evs, out := collect(t, launch(t, r, refSpec(t, r, "badres", t.TempDir(), `@result {"status":"finished","summary":"all good"}`)))
	require.Equal(t, agent.StatusFailed, out.Result.Status)
	require.Equal(t, agent.KindProtocol, out.Result.Failure.Kind)
	require.Len(t, messages(evs, agent.TypeResult), 1)

	// Produced by a decoder: the runner itself never hands on a result that breaks the schema.
	s := refSpec(t, r, "badend", t.TempDir(), "@done")
	s.Adapter = brokenEnd{}
	_, out = collect(t, launch(t, r, s))
	require.Equal(t, agent.StatusFailed, out.Result.Status)
	require.Equal(t, agent.KindProtocol, out.Result.Failure.Kind)
	require.Contains(t, out.ResultProblem, `"finished"`)
	require.Equal(t, "all good", out.Result.Summary)
}

func TestLaunch_ProgramNotFoundIsStartError(t *testing.T) {
	r := newRunner(t, "")
	s := refSpec(t, r, "nf", t.TempDir(), "")
	s.Profile.Command = []string{"/nonexistent/agent-binary"}
	_, err := r.Launch(t.Context(), s)
	require.ErrorIs(t, err, ErrStart)
	require.ErrorIs(t, err, ErrProgramNotFound, "the scheduler escalates a missing program instead of failing the mission")
	require.Contains(t, err.Error(), "/nonexistent/agent-binary")

	// The attempt directory keeps the record; it cannot be launched again.
	rec, ok, err := readExit(s.AttemptDir)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, 127, rec.Code)
	_, err = r.Launch(t.Context(), s)
	require.ErrorIs(t, err, ErrAttemptExists)
	requireNoZombieChildren(t)
}

func TestLaunch_CheckpointThenResumeSkipsDoneSteps(t *testing.T) {
	r := newRunner(t, "")
	ws := gitRepo(t, "")
	brief := "@write a.txt one\n@commit first half\n@checkpoint first half done\n@yield preempted\n@append a.txt \" two\"\n@commit second half\n@done"
	s := refSpec(t, r, "cp", ws, brief)
	evs, out := collect(t, launch(t, r, s))
	cps := messages(evs, agent.TypeCheckpoint)
	require.Len(t, cps, 1)
	require.JSONEq(t, `{"step":3,"note":"first half done"}`, string(cps[0].Checkpoint))
	ys := messages(evs, agent.TypeYield)
	require.Len(t, ys, 1)
	require.Equal(t, "preempted", ys[0].Reason)
	require.Equal(t, 0, out.Exit.Code)

	// Attempt 2 gets the yield's checkpoint and continues after it.
	s2 := refSpec(t, r, "cp", ws, brief)
	s2.AttemptDir, _ = r.AttemptDir("cp", 2)
	s2.Request.Start.Attempt = 2
	s2.Request.Start.Checkpoint = ys[0].Checkpoint
	evs2, out2 := collect(t, launch(t, r, s2))
	require.Equal(t, agent.StatusCompleted, out2.Result.Status, "%+v", out2.Result)
	require.Len(t, logsContaining(evs2, "resuming from checkpoint: skipping steps 1-4"), 1, summarize(evs2))
	require.Empty(t, logsContaining(evs2, "wrote a.txt (3 bytes)"), "the first write must not run again")
	b, err := os.ReadFile(filepath.Join(ws, "a.txt"))
	require.NoError(t, err)
	require.Equal(t, "one two", string(b))
	require.Equal(t, "second half\nfirst half\ninitial\n", git(t, ws, "log", "--format=%s"))
}

func TestLaunch_SoftTimeoutPingsAgent(t *testing.T) {
	r := newRunner(t, "")
	s := refSpec(t, r, "soft", t.TempDir(), "@sleep 1500ms\n@done")
	s.Profile.SoftTimeout = agent.Duration(200 * time.Millisecond)
	evs, out := collect(t, launch(t, r, s))
	require.Equal(t, agent.StatusCompleted, out.Result.Status)
	var soft, pong int
	for i, ev := range evs {
		if ev.Kind == EventSoftTimeout {
			require.False(t, ev.FromAgent())
			soft = i + 1
		}
		if ev.Kind == EventMessage && ev.Message.Type == agent.TypeHeartbeat && ev.Message.Message == "pong 1" {
			pong = i + 1
		}
	}
	require.Positive(t, soft, summarize(evs))
	require.Positive(t, pong, "the agent answers agent.ping: %v", summarize(evs))
}

func TestLaunch_DeadWarmShimIsReplaced(t *testing.T) {
	r := newRunner(t, "")
	sp, _ := testenv.Receive(t, "a warm shim", r.spare)
	require.NoError(t, sp.cmd.Process.Kill())
	<-sp.done
	r.spare <- sp
	_, out := collect(t, launch(t, r, refSpec(t, r, "warmdead", t.TempDir(), "@done")))
	require.Equal(t, agent.StatusCompleted, out.Result.Status)
}

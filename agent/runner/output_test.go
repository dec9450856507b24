package runner

import (
	"errors"
	"github.com/mcp-scheduler/mcp-scheduler/e2e/testenv"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
)

// B23: lines far above 64 KiB are accepted; one over the cap is cut and reported, and the
// stream goes on.
func TestB23_HugeLinesAcceptedOverCapCutAndStreamGoesOn(t *testing.T) {
	r := newRunner(t, "")
	p := launch(t, r, refSpec(t, r, "big", t.TempDir(), "@big-line 5MiB\n@big-line 20MiB\n@log info after the big line\n@done"))
	evs, out := collect(t, p)
	require.Equal(t, agent.StatusCompleted, out.Result.Status)
	require.Equal(t, 1, out.CutLines)

	var kinds []EventKind
	for _, ev := range evs {
		kinds = append(kinds, ev.Kind)
	}
	require.Equal(t, []EventKind{EventMessage, EventLineTooLong, EventMessage, EventMessage}, kinds, summarize(evs))
	require.Len(t, evs[0].Message.Message, 5<<20)
	require.ErrorIs(t, evs[1].Err, agent.ErrLineTooLong)
	require.Greater(t, evs[1].Size, int64(20<<20))
	require.Equal(t, "after the big line", evs[2].Message.Message)
	require.Equal(t, agent.TypeResult, evs[3].Message.Type)
}

func TestGarbageLines_LoggedCountedNotFatal(t *testing.T) {
	r := newRunner(t, "")
	p := launch(t, r, refSpec(t, r, "garbage", t.TempDir(), "@garbage\n@garbage \"{\\\"type\\\": broken\"\n@garbage {\"no\":\"type\"}\n@log info still talking\n@done"))
	evs, out := collect(t, p)
	require.Equal(t, agent.StatusCompleted, out.Result.Status)
	require.Equal(t, 3, out.BadLines)
	var bad int
	for _, ev := range evs {
		if ev.Kind == EventBadLine {
			bad++
			require.Error(t, ev.Err)
			require.True(t, ev.FromAgent())
		}
	}
	require.Equal(t, 3, bad)
	require.NotEmpty(t, logsContaining(evs, "still talking"))
}

// B24: a BOM, CRLF endings, blank and whitespace-only lines and a banner on a child's stdout.
func TestB24_BOMCRLFBlankLinesOnChildStdout(t *testing.T) {
	r := newRunner(t, "")
	raw := "\xEF\xBB\xBF" + `{"type":"task.log","message":"one"}` + "\r\n" + `{"type":"task.log","message":"two"}` + "\r\n\r\n  \t \nbanner line, not JSON\r\n"
	p := launch(t, r, refSpec(t, r, "crlf", t.TempDir(), "@raw "+strconv.Quote(raw)+"\n@done"))
	evs, out := collect(t, p)
	require.Equal(t, agent.StatusCompleted, out.Result.Status)
	require.Equal(t, 1, out.BadLines)
	require.Equal(t, []string{"message:task.log one", "message:task.log two"}, summarize(evs[:2]))
	require.Equal(t, EventBadLine, evs[2].Kind)
	require.Equal(t, agent.TypeResult, evs[3].Message.Type)
	st, err := os.Stat(filepath.Join(p.spec.AttemptDir, FileStdout))
	require.NoError(t, err)
	require.Equal(t, st.Size(), out.Offset)
}

// B26: 200 KiB of stderr before the first stdout line neither blocks the agent nor the
// runner; the mission log gets all of it and the outcome its tail.
func TestB26_StderrFloodBeforeFirstEvent(t *testing.T) {
	r := newRunner(t, "")
	s := refSpec(t, r, "stderr", t.TempDir(), "@stderr 200KiB\n@log info first event\n@crash 2")
	log := &testenv.SyncBuffer{}
	s.Log = log
	evs, out := collect(t, launch(t, r, s))
	require.Equal(t, "first event", evs[0].Message.Message)
	require.Equal(t, 2, out.Exit.Code)
	require.Equal(t, 200<<10, len(log.String()))
	require.Len(t, out.StderrTail, DefaultStderrTail)
	require.True(t, strings.HasSuffix(out.StderrTail, "e\n"))
	require.Equal(t, agent.KindCrash, out.Result.Failure.Kind)
}

func TestSecrets_RedactedFromEventsLogAndTail(t *testing.T) {
	const secret = "sk-test-0123456789abcdef"
	t.Setenv("REF_API_KEY", secret)
	r := newRunner(t, "")
	s := refSpec(t, r, "secret", t.TempDir(), "@env REF_API_KEY\n@done")
	s.Profile.SecretEnv = []string{"REF_API_KEY"}
	log := &testenv.SyncBuffer{}
	s.Log = log
	evs, out := collect(t, launch(t, r, s))
	require.Equal(t, []string{"env REF_API_KEY=" + agent.Redacted}, logsContaining(evs, "REF_API_KEY"))
	require.Contains(t, log.String(), "env REF_API_KEY="+agent.Redacted)
	require.NotContains(t, log.String(), secret)
	require.Contains(t, out.StderrTail, agent.Redacted)
	require.NotContains(t, out.StderrTail, secret)
}

// The agent's environment is the allow-list plus the mission's variables: the MCP client's
// own variables never reach it (design brief §7, bugs.md B33).
func TestEnv_AllowListOnlyReachesAgent(t *testing.T) {
	t.Setenv("CLAUDECODE", "1")
	t.Setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9/main-agent")
	t.Setenv("REF_ALLOWED", "yes")
	r := newRunner(t, "")
	s := refSpec(t, r, "env", t.TempDir(), "@env CLAUDECODE\n@env ANTHROPIC_BASE_URL\n@env REF_ALLOWED\n@env MISSION_VAR\n@env LD_PRELOAD\n@done")
	s.Profile.Env = append(s.Profile.Env, "REF_ALLOWED")
	s.Vars = map[string]string{"MISSION_VAR": "mv", "LD_PRELOAD": "/tmp/evil.so"}
	evs, _ := collect(t, launch(t, r, s))
	require.Equal(t, []string{
		"env CLAUDECODE is unset", "env ANTHROPIC_BASE_URL is unset", "env REF_ALLOWED=yes",
		"env MISSION_VAR=mv", "env LD_PRELOAD is unset",
	}, logsContaining(evs, "env "))
}

// B33: shell metacharacters in a workspace path and a commit message stay literal: no shell
// is involved anywhere between the runner and git.
func TestB33_NoShellBetweenRunnerAndGit(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "pwned")
	ws := gitRepo(t, filepath.Join(t.TempDir(), "x; touch "+marker))
	msg := "fix $(touch " + marker + ") and `touch " + marker + "`; touch " + marker
	r := newRunner(t, "")
	s := refSpec(t, r, "b33", ws, "@write f.txt hi\n@commit "+strconv.Quote(msg)+"\n@done")
	s.Request.Start.Title = "$(touch " + marker + ")"
	_, out := collect(t, launch(t, r, s))
	require.Equal(t, agent.StatusCompleted, out.Result.Status, "%+v", out.Result)
	require.Equal(t, msg, strings.TrimSpace(git(t, ws, "log", "-1", "--format=%B")))
	_, err := os.Stat(marker)
	require.True(t, errors.Is(err, os.ErrNotExist), "marker file was created: a shell ran")
}

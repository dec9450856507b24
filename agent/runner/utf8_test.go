package runner

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
)

// A protocol line with bytes that are not UTF-8, written by a real child, is a bad line whose
// error names the field; the stream goes on. A worker.result such as that fails the attempt
// with kind protocol, naming the field, instead of being stored with U+FFFD in its text.
func TestInvalidUTF8Lines_ProtocolErrorNamingTheFieldStreamGoesOn(t *testing.T) {
	r := newRunner(t, "")
	raw := `{"type":"task.log","level":"info","message":"caf` + "\xe9" + `"}` + "\n" +
		`{"type":"task.log","level":"info","message":"still talking"}` + "\n"
	p := launch(t, r, refSpec(t, r, "utf8", t.TempDir(), "@raw "+strconv.Quote(raw)+"\n@done"))
	evs, out := collect(t, p)
	require.Equal(t, agent.StatusCompleted, out.Result.Status)
	require.Equal(t, 1, out.BadLines)
	require.Equal(t, EventBadLine, evs[0].Kind, summarize(evs))
	require.ErrorContains(t, evs[0].Err, "ndjson: protocol error: message: is not valid UTF-8 (byte 0xe9 at offset 48)")
	require.Equal(t, []string{"still talking"}, logsContaining(evs, "still talking"))
}

func TestInvalidUTF8Result_IsAProtocolFailure(t *testing.T) {
	r := newRunner(t, "")
	raw := `{"type":"worker.result","status":"completed","summary":"done ` + "\xff" + `"}` + "\n"
	_, out := collect(t, launch(t, r, refSpec(t, r, "utf8r", t.TempDir(), "@raw "+strconv.Quote(raw)+"\n@crash 1")))
	require.Equal(t, agent.StatusFailed, out.Result.Status)
	require.Equal(t, agent.KindProtocol, out.Result.Failure.Kind)
	require.Contains(t, out.Result.Summary, "summary: is not valid UTF-8 (byte 0xff")
	require.NotContains(t, out.Result.Failure.Diagnostic, "\xff", "the diagnostic is valid UTF-8")
}

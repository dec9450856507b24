package watch

import (
	"context"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/storage/teststore"
	"github.com/mcp-scheduler/mcp-scheduler/tools"
)

// hiddenChars are characters a frame must never hold as themselves (issue 28).
const hiddenChars = "\u202E\u200B\u200D\u2066"

// requireNoHidden fails when a rendered frame holds a hidden character or an escape that is
// not the view's own styling (ansi.Strip removes the styling the view adds).
func requireNoHidden(t *testing.T, frame string) {
	t.Helper()
	plain := ansi.Strip(frame)
	require.False(t, strings.ContainsAny(plain, hiddenChars+"\x1b"), "the frame shows a hidden character itself: %q", plain)
}

// Issue 28 in watch: a brief, a title, a progress message, an escalation and the agent's
// output holding bidirectional controls, zero-width characters or terminal escapes are drawn
// with those characters as <U+…> escapes, on every screen.
func TestView_ShowsHiddenCharactersAsEscapes(t *testing.T) {
	snap := sample()
	snap.Voyages[0].Title = "hand\u202Ebook"
	snap.Running[0].Progress.Message = "zero\u200Bwidth \x1b[2J"
	snap.Escalations[0].Reason = "which \u2066title\u2069?"
	src := &recorder{snap: snap,
		view: MissionView{Detail: engine.MissionDetail{Mission: domain.Mission{Title: "the \u202Echapter", State: domain.StatePending,
			Brief: "rename report\u202Etxt.exe\nthen\u200Dstop"}}},
		log: tools.MissionLog{Attempt: 1, State: domain.StateRunning,
			Output: &tools.AttemptLog{Stdout: "plain \x1b[31mred\u202E\n", StdoutBytes: 20}}}
	m := loaded(t, src)
	v := m.View()
	requireNoHidden(t, v)
	for _, want := range []string{"hand<U+202E>book", "zero<U+200B>width <U+001B>[2J", "which <U+2066>title<U+2069>?"} {
		require.Contains(t, ansi.Strip(v), want)
	}

	m = press(t, m, "down", "enter")
	v = m.View()
	requireNoHidden(t, v)
	require.Contains(t, ansi.Strip(v), "the <U+202E>chapter")
	require.Contains(t, ansi.Strip(v), "rename report<U+202E>txt.exe")
	require.Contains(t, ansi.Strip(v), "then<U+200D>stop")

	m = press(t, m, "l")
	v = m.View()
	requireNoHidden(t, v)
	require.Contains(t, ansi.Strip(v), "plain <U+001B>[31mred<U+202E>")
}

// A title stored before the rule for names (written straight to the store) is read by watch
// from the engine and printed escaped in the plain form (watch --once, piped).
func TestPlain_TitleStoredBeforeTheRuleShowsEscaped(t *testing.T) {
	ctx := context.Background()
	e := newEngine(t)
	c, err := e.CreateMission(ctx, engine.MissionSpec{Title: "report", Brief: "a brief with \u202E", WriteArea: []string{"r/**"}}, "test")
	require.NoError(t, err)
	teststore.WriteMissionTitle(t, e.Store(), c.Mission.ID, "report\u202Etxt.exe")
	s, err := Load(ctx, e)
	require.NoError(t, err)
	p := Plain(s)
	require.Contains(t, p, "report<U+202E>txt.exe")
	require.False(t, strings.ContainsAny(p, hiddenChars), "%q", p)
}

package watch

import (
	"fmt"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/tools"
)

// sized is m after the terminal reported width×height.
func sized(m Model, width, height int) Model {
	next, _ := m.Update(tea.WindowSizeMsg{Width: width, Height: height})
	return next.(Model)
}

// words is s with its runs of spaces and line breaks made one space (wrapped text read back).
func words(s string) string { return strings.Join(strings.Fields(ansi.Strip(s)), " ") }

// noDots is words(s) without the help's item separators (a line break replaces one).
func noDots(s string) string { return words(strings.ReplaceAll(s, "·", " ")) }

// requireFits checks that no line of a view is wider than width.
func requireFits(t *testing.T, view string, width int) {
	t.Helper()
	for _, l := range strings.Split(ansi.Strip(view), "\n") {
		require.LessOrEqual(t, ansi.StringWidth(l), width, "%q", l)
	}
}

// The key help of every screen fits an 80-column terminal (or a narrower one) whole: it
// wraps between its items instead of being cut.
func TestView_FooterWrapsInsteadOfBeingCut(t *testing.T) {
	src := &recorder{snap: sample(), view: MissionView{Detail: engine.MissionDetail{Mission: domain.Mission{State: domain.StateRunning}}},
		log: tools.MissionLog{Attempt: 1, State: domain.StateRunning}}
	for _, width := range []int{80, 50} {
		m := sized(loaded(t, src), width, 30)
		for _, c := range []struct {
			keys []string
			help string
		}{{nil, helpOverview}, {[]string{"down", "enter"}, helpMission}, {[]string{"l"}, helpLog}} {
			m = press(t, m, c.keys...)
			v := m.View()
			requireFits(t, v, width)
			require.Contains(t, noDots(v), noDots(c.help), "width %d: the whole help (lines break between its items)", width)
			cut := ansi.Strip(v)
			if c.help == helpOverview { // the overview's rows are cut to the width; its help is not
				lines := strings.Split(cut, "\n")
				cut = strings.Join(lines[len(lines)-len(wrapHelp(c.help, width)):], "\n")
			}
			require.NotContains(t, cut, "…", "width %d: nothing cut", width)
		}
		m = press(t, m, "esc", "esc", "?")
		require.Contains(t, words(m.View()), words(helpMore), "the longer help wraps too")
		requireFits(t, m.View(), width)
	}
}

// The mission screen wraps a long reason (why it waits, an escalation's decision) to the
// terminal's width: every word shows, no line is wider, nothing is cut with "…".
func TestView_MissionScreenWrapsAReason(t *testing.T) {
	reason := "mission msn_x's cost budget is spent ($0.5000 of $0.1000): nothing more starts until it is raised (the command that raises it)"
	decide := "raise the budget the failure names, then resolve this escalation with action retry; or cancel the mission"
	src := &recorder{snap: sample(), view: MissionView{
		Detail:      engine.MissionDetail{Mission: domain.Mission{Title: "t", State: domain.StatePending}, WhyNotRunning: []engine.Reason{{Code: "budget", Message: reason}}},
		Escalations: []domain.Escalation{{ID: "esc_1", Kind: "budget", Route: domain.RouteMainAgent, Reason: "spent", DecisionRequired: decide}}}}
	m := press(t, sized(loaded(t, src), 80, 40), "down", "enter")
	v := m.View()
	requireFits(t, v, 80)
	require.Contains(t, words(v), "waiting budget: "+reason)
	require.Contains(t, words(v), "decide: "+decide)
	require.NotContains(t, ansi.Strip(v), "…")
}

// The log screen opens at its end (the newest lines) and follows it: lines that arrive show
// without a key; a long line wraps instead of being cut.
func TestView_LogOpensAtTheEndAndFollows(t *testing.T) {
	stdout := func(n int) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, "{\"type\":\"task.log\",\"level\":\"info\",\"message\":\"line %03d\"}\n", i)
		}
		return b.String()
	}
	long := strings.Repeat("word ", 30) + "tail-of-the-long-line"
	log := func(n int) tools.MissionLog {
		out := stdout(n) + `{"type":"task.log","level":"info","message":"` + long + `"}` + "\n"
		return tools.MissionLog{Attempt: 1, State: domain.StateRunning, Output: &tools.AttemptLog{Stdout: out, StdoutBytes: int64(len(out))}}
	}
	src := &recorder{snap: sample(), view: MissionView{Detail: engine.MissionDetail{Mission: domain.Mission{State: domain.StateRunning}}}, log: log(100)}
	m := press(t, sized(loaded(t, src), 80, 24), "down", "l")
	v := ansi.Strip(m.View())
	require.Contains(t, v, "log of msn_")
	require.Contains(t, v, "line 099", "the newest lines show")
	require.Contains(t, words(v), long, "a long line wraps, whole")
	require.NotContains(t, v, "line 000", "not the oldest")
	require.NotContains(t, v, "events", "not the top")
	requireFits(t, v, 80)

	src.log = log(150)
	next, cmd := m.Update(Refresh{})
	m = run(t, next.(Model), cmd)
	require.Contains(t, ansi.Strip(m.View()), "line 149", "it follows the end as lines arrive")
	m = press(t, m, "k", "k", "k")
	require.NotContains(t, words(m.View()), long, "scrolled up, the end is out of view")
	m = press(t, m, "f")
	require.Contains(t, words(m.View()), long, "f follows the end again")
}

// The log screen shows each event as a readable line (type, mission and attempt, then each
// field as "name: value"), wrapped between words at the terminal's width: no name or value
// is broken mid-word, and a long event (more than 300 characters of data) is shown whole.
func TestView_LogEventsAreReadableLines(t *testing.T) {
	data := `{"agent":"reference","leader_epoch":7,"profile":"reference-with-a-long-profile-name","runtime":{"name":"ndjson","command":["mcp-scheduler","reference-agent"]},` +
		`"worktree":"/home/someone/.local/state/mcp-scheduler/worktrees/msn_01M8T87AH4VGAGTYFBXJ7S6VCK/attempt-1","note":"` + strings.Repeat("quite a long note ", 12) + `the end"}`
	require.Greater(t, len(data), 300)
	ev := domain.Event{Type: "attempt.started", MissionID: "msn_a", Attempt: 1, Actor: "scheduler", Data: []byte(data),
		At: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)}
	src := &recorder{snap: sample(), view: MissionView{Detail: engine.MissionDetail{Mission: domain.Mission{State: domain.StateRunning}}},
		log: tools.MissionLog{Attempt: 1, State: domain.StateRunning, Events: []domain.Event{ev}}}
	for _, width := range []int{80, 120} {
		m := press(t, sized(loaded(t, src), width, 40), "down", "l")
		v := ansi.Strip(m.View())
		requireFits(t, v, width)
		for _, want := range []string{"attempt.started", "msn_a attempt 1", "by scheduler", "agent: reference", "leader_epoch: 7",
			"profile: reference-with-a-long-profile-name", "runtime.name: ndjson", "runtime.command: [mcp-scheduler, reference-agent]", "the end"} {
			require.Contains(t, words(v), want, "width %d: %q whole:\n%s", width, want, v)
		}
		for _, token := range []string{"leader_epoch:", "profile:", "runtime.command:", "reference-with-a-long-profile-name"} {
			require.True(t, lineHas(v, token), "width %d: %q on one line, not broken mid-word:\n%s", width, token, v)
		}
		require.NotContains(t, v, `"leader_epoch"`, "fields, not raw JSON")
		require.Contains(t, words(v), strings.TrimSpace(strings.Repeat("quite a long note ", 12))+" the end", "not cut")
	}
}

// lineHas reports whether one line of s holds sub.
func lineHas(s, sub string) bool {
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			return true
		}
	}
	return false
}

// The mission screen names the voyage with the mission's key, or alone for a mission added
// to a voyage without a key (`go --voyage`): never an empty "(key )".
func TestView_MissionScreenVoyageKey(t *testing.T) {
	for key, want := range map[string]string{"outline": "voyage      vyg_1 (key outline)", "": "voyage      vyg_1"} {
		src := &recorder{snap: sample(), view: MissionView{Detail: engine.MissionDetail{Mission: domain.Mission{Title: "t",
			State: domain.StatePending, VoyageID: "vyg_1", Key: key}}}}
		v := ansi.Strip(press(t, sized(loaded(t, src), 80, 40), "down", "enter").View())
		require.Contains(t, strings.Split(v, "\n"), want, "key %q:\n%s", key, v)
		require.NotContains(t, v, "(key )")
	}
}

package watch

import (
	"context"
	"errors"
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

// recorder is a Source that records what the model asked for; the tests run the commands the
// model returns by hand, so Update is exercised alone.
type recorder struct {
	snap      Snapshot
	view      MissionView
	log       tools.MissionLog
	resolved  []string
	resolveTo error
}

func (r *recorder) Snapshot(context.Context) (Snapshot, error) { return r.snap, nil }
func (r *recorder) Mission(_ context.Context, id string) (MissionView, error) {
	v := r.view
	v.Detail.Mission.ID = id
	return v, nil
}
func (r *recorder) Log(_ context.Context, id string) (tools.MissionLog, error) {
	l := r.log
	l.MissionID = id
	return l, nil
}
func (r *recorder) Resolve(_ context.Context, id, action string) (domain.Escalation, error) {
	r.resolved = append(r.resolved, id+" "+action)
	if r.resolveTo != nil {
		return domain.Escalation{}, r.resolveTo
	}
	return domain.Escalation{ID: id, State: domain.EscalationResolved, Resolution: action}, nil
}

func sample() Snapshot {
	at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	pct := 40.0
	return Snapshot{
		At: at,
		Status: tools.StatusResult{Loop: "leading: planning", Leader: &engine.Leader{Owner: "host:1:2"}, Total: 4,
			Counts: map[domain.MissionState]int{domain.StateRunning: 1, domain.StatePending: 1, domain.StateBlocked: 1, domain.StateCompleted: 1}, OpenEscalations: 1},
		Voyages: []Voyage{{ID: "vyg_1", Title: "handbook", State: domain.VoyageActive,
			Counts: map[domain.MissionState]int{domain.StateCompleted: 1, domain.StateRunning: 1, domain.StatePending: 1, domain.StateBlocked: 1},
			Missions: []engine.MissionLine{
				{ID: "msn_a", Key: "intro", State: domain.StateCompleted, Landing: domain.LandingLanded, Summary: "wrote the intro"},
				{ID: "msn_b", Key: "chapter", State: domain.StateRunning},
				{ID: "msn_c", Key: "index", State: domain.StatePending, Why: []engine.Reason{{Code: "hard_dependency", Message: "waits for msn_b"}}},
				{ID: "msn_d", Key: "title", State: domain.StateBlocked, Why: []engine.Reason{{Code: "state", Message: "waiting for escalation esc_1"}}},
			}}},
		Running: []Running{{ID: "msn_b", Key: "chapter", State: domain.StateRunning, Attempt: 1, Agent: "reference",
			Progress: &domain.Progress{Percent: &pct, Message: "writing chapter 2\nline two", At: at.Add(-3 * time.Second)}}},
		Waiting:     []Waiting{{ID: "msn_c", Key: "index", State: domain.StatePending, Why: []engine.Reason{{Code: "hard_dependency", Message: "waits for msn_b"}, {Code: "slots", Message: "all slots busy"}}}},
		Escalations: []domain.Escalation{{ID: "esc_1", Kind: "decision", MissionIDs: []string{"msn_d"}, Reason: "which title?", DecisionRequired: "pick one"}},
	}
}

// loaded is a model that has applied the sample snapshot, sized 160×40.
func loaded(t *testing.T, src *recorder) Model {
	t.Helper()
	m := NewModel(Options{Source: src, Interval: time.Hour})
	next, _ := m.Update(tea.WindowSizeMsg{Width: 160, Height: 40})
	next, _ = next.Update(snapshotMsg{seq: 1, snap: src.snap})
	return next.(Model)
}

// press sends keys and runs the command each returns (one level: the model's reads).
func press(t *testing.T, m Model, keys ...string) Model {
	t.Helper()
	for _, k := range keys {
		next, cmd := m.Update(keyMsg(k))
		m = next.(Model)
		m = run(t, m, cmd)
	}
	return m
}

// run runs a command and feeds what it answers back (batches flattened).
func run(t *testing.T, m Model, cmd tea.Cmd) Model {
	t.Helper()
	if cmd == nil {
		return m
	}
	msg := cmd()
	switch msg := msg.(type) {
	case tea.BatchMsg:
		for _, c := range msg {
			m = run(t, m, c)
		}
		return m
	case nil, tea.QuitMsg:
		return m
	}
	next, cmd2 := m.Update(msg)
	return run(t, next.(Model), cmd2)
}

func keyMsg(k string) tea.KeyMsg {
	switch k {
	case "enter":
		return tea.KeyMsg{Type: tea.KeyEnter}
	case "esc":
		return tea.KeyMsg{Type: tea.KeyEscape}
	case "down":
		return tea.KeyMsg{Type: tea.KeyDown}
	case "up":
		return tea.KeyMsg{Type: tea.KeyUp}
	}
	return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(k)}
}

func TestView_OverviewShowsEverySection(t *testing.T) {
	m := loaded(t, &recorder{snap: sample()})
	v := m.View()
	for _, want := range []string{"VOYAGES (1)", "vyg_1", "handbook", "(1 of 4 completed)", "msn_a", "landed", "wrote the intro",
		"RUNNING (1)", "agent reference", "40% writing chapter 2 line two · 3s ago",
		"WAITING (1)", "hard_dependency: waits for msn_b", "and slots: all slots busy",
		"ESCALATIONS (1)", "esc_1", "which title? — decide: pick one", "leading: planning (host:1:2)", helpOverview[:20]} {
		require.Contains(t, v, want)
	}
	require.Len(t, strings.Split(v, "\n"), 40, "the view fills the screen, help line last")
	require.Contains(t, strings.Split(v, "\n")[39], "q quit")
}

func TestView_SaysPlainlyWhenNoSchedulerLeads(t *testing.T) {
	s := sample()
	s.Status.Loop, s.Status.Leader = "idle", nil
	m := loaded(t, &recorder{snap: s})
	v := strings.Join(strings.Fields(m.View()), " ") // the line is wrapped to the screen
	require.Contains(t, v, "NO SCHEDULER LEADS — "+tools.LoopIdleText)
	require.Contains(t, Plain(s), "NO SCHEDULER LEADS")
}

func TestUpdate_SelectionMovesAndSurvivesARefresh(t *testing.T) {
	src := &recorder{snap: sample()}
	m := loaded(t, src)
	require.Contains(t, selectedLine(t, m), "msn_a")
	m = press(t, m, "down", "down")
	require.Contains(t, selectedLine(t, m), "msn_c")
	// A refresh that adds a mission above keeps the cursor on msn_c.
	s := sample()
	s.Voyages[0].Missions = append([]engine.MissionLine{{ID: "msn_0", Key: "new", State: domain.StatePending}}, s.Voyages[0].Missions...)
	next, _ := m.Update(snapshotMsg{seq: 2, snap: s})
	m = next.(Model)
	require.Contains(t, selectedLine(t, m), "msn_c")
	// An older snapshot arriving late is not shown.
	next, _ = m.Update(snapshotMsg{seq: 1, snap: sample()})
	require.Contains(t, next.(Model).View(), "msn_0")
	m = press(t, m, "G")
	require.Contains(t, selectedLine(t, m), "esc_1")
	m = press(t, m, "down")
	require.Contains(t, selectedLine(t, m), "esc_1", "the cursor stops at the last row")
}

func selectedLine(t *testing.T, m Model) string {
	t.Helper()
	for _, l := range strings.Split(m.View(), "\n") {
		if strings.HasPrefix(l, "▸") {
			return l
		}
	}
	t.Fatalf("no selected line in:\n%s", m.View())
	return ""
}

func TestUpdate_EnterOpensTheMissionAndLFollowsItsLog(t *testing.T) {
	src := &recorder{snap: sample(),
		view: MissionView{Detail: engine.MissionDetail{Mission: domain.Mission{Title: "the chapter", State: domain.StateRunning, Brief: "write it\n@done"},
			WhyNotRunning: nil}},
		log: tools.MissionLog{Attempt: 1, State: domain.StateRunning, Events: []domain.Event{{Type: "mission.progress", Data: []byte(`{"message":"half"}`)}},
			Output: &tools.AttemptLog{Stdout: agentStdout, StdoutBytes: int64(len(agentStdout))}}}
	m := loaded(t, src)
	m = press(t, m, "down", "enter")
	v := m.View()
	require.Contains(t, v, "mission msn_b")
	require.Contains(t, v, "the chapter")
	require.Contains(t, v, "brief")
	require.Contains(t, v, "write it")
	require.Contains(t, v, helpMission[:20])
	m = press(t, m, "l")
	v = m.View()
	require.Contains(t, v, "log of msn_b")
	require.Contains(t, v, "mission.progress")
	for _, want := range []string{"progress 40%: drafting the outline", "looking at the files", "checkpoint saved: half way",
		"I will read the README first.", `tool Bash: {"command":"ls -la"}`, "result success: all done", "tool shell: go test ./...",
		"the tests pass", `{"type":"something.new","n":1}`, "plain text from the agent", "result completed: outline written"} {
		require.Contains(t, v, want, "the log is told as text")
	}
	require.NotContains(t, v, "heartbeat", "heartbeats are noise")
	require.NotContains(t, v, `"type":"task.progress"`, "known lines are not shown raw")
	m = press(t, m, "esc")
	require.Contains(t, m.View(), "mission msn_b", "esc from the log goes back to the mission")
	m = press(t, m, "esc")
	require.Contains(t, m.View(), "VOYAGES (1)")
}

func TestUpdate_ResolveAsksThenCallsTheEngine(t *testing.T) {
	src := &recorder{snap: sample()}
	m := loaded(t, src)
	m = press(t, m, "s")
	require.Contains(t, m.View(), "no escalation selected", "a mission row is selected, not an escalation")
	require.Empty(t, src.resolved)
	m = press(t, m, "G", "s")
	require.Contains(t, m.View(), "resolve esc_1 with skip? y to confirm")
	m = press(t, m, "n")
	require.Contains(t, m.View(), "esc_1 kept open")
	require.Empty(t, src.resolved)
	m = press(t, m, "r", "y")
	require.Equal(t, []string{"esc_1 retry"}, src.resolved)
	require.Contains(t, m.View(), "esc_1 resolved: retry")

	src.resolveTo = domain.Invalid("escalation_id", "esc_1 is already resolved", "list open ones with list_escalations")
	m = press(t, m, "a", "y")
	require.Contains(t, m.View(), "resolve esc_1: "+src.resolveTo.Error(), "the engine's error, as the CLI prints it")
}

func TestUpdate_QuitsOnQ(t *testing.T) {
	m := loaded(t, &recorder{snap: sample()})
	_, cmd := m.Update(keyMsg("q"))
	require.NotNil(t, cmd)
	require.Equal(t, tea.Quit(), cmd())
}

func TestUpdate_RefreshReloadsWhatIsOnScreen(t *testing.T) {
	src := &recorder{snap: sample(), view: MissionView{Detail: engine.MissionDetail{Mission: domain.Mission{State: domain.StateRunning}}}}
	m := NewModel(Options{Source: src})
	m = run(t, m, m.Init())
	require.Contains(t, m.View(), "msn_a")
	src.snap.Voyages[0].Missions[0].Landing = domain.LandingConflicted
	next, cmd := m.Update(Refresh{})
	m = run(t, next.(Model), cmd)
	require.Contains(t, m.View(), "conflicted")
	m = press(t, m, "enter")
	require.Contains(t, m.View(), "state       running")
	src.view.Detail.Mission.State = domain.StateCompleted
	next, cmd = m.Update(Refresh{})
	m = run(t, next.(Model), cmd)
	require.Contains(t, m.View(), "state       completed", "the open mission is read again too")
}

func TestView_LoadErrorIsShown(t *testing.T) {
	m := loaded(t, &recorder{snap: sample()})
	next, _ := m.Update(snapshotMsg{seq: 5, err: errors.New("database is locked")})
	require.Contains(t, next.(Model).View(), "reading the data dir failed: database is locked")
	require.Contains(t, next.(Model).View(), "msn_a", "the last snapshot stays on screen")
}

func TestPlain_HasNoEscapeCodesAndFoldsAgentText(t *testing.T) {
	s := sample()
	s.Running[0].Progress.Message = "red \x1b[31mtext\x1b[0m\r\nnext"
	p := Plain(s)
	require.NotContains(t, p, "\x1b")
	require.Contains(t, p, "red <U+001B>[31mtext<U+001B>[0m  next", "the escape shows as an escape; newlines fold")
	require.Contains(t, p, "ESCALATIONS (1)")
}

func TestView_NarrowScreenClipsLines(t *testing.T) {
	m := loaded(t, &recorder{snap: sample()})
	next, _ := m.Update(tea.WindowSizeMsg{Width: 40, Height: 12})
	for _, l := range strings.Split(next.(Model).View(), "\n") {
		require.LessOrEqual(t, len([]rune(l)), 40, "%q", l)
	}
}

// A burst of changes while a snapshot is being read costs one read more, not one each.
func TestUpdate_RefreshesCoalesceWhileReading(t *testing.T) {
	src := &recorder{snap: sample()}
	m := loaded(t, src)
	next, first := m.Update(Refresh{})
	require.NotNil(t, first, "idle: a refresh reads at once")
	for range 5 {
		var cmd tea.Cmd
		next, cmd = next.Update(Refresh{})
		require.Nil(t, cmd, "a read runs: the refresh waits for it")
	}
	msg := first()
	next, again := next.Update(msg)
	require.NotNil(t, again, "the refreshes that waited cause one more read")
	next, cmd := next.Update(again())
	require.Nil(t, cmd, "and nothing after it")
	require.Contains(t, next.(Model).View(), "msn_a")
}

// Plain text says clock times, not ages: the same state read a minute later prints the same
// lines below the header, so a piped watch prints again only when something changed (it
// printed every second while a mission waited: "since 5s ago", "since 6s ago", …).
func TestPlain_SameStateLaterPrintsTheSameBody(t *testing.T) {
	s := sample()
	s.Waiting = append(s.Waiting, Waiting{ID: "msn_w", Key: "later", State: domain.StatePending,
		Why: []engine.Reason{{Code: "backoff", Message: "retries after a failure", Since: s.At.Add(-5 * time.Second)}}})
	first := Plain(s)
	s.At = s.At.Add(time.Minute)
	second := Plain(s)
	_, b1, _ := strings.Cut(first, "\n")
	_, b2, _ := strings.Cut(second, "\n")
	require.Equal(t, b1, b2)
	require.Contains(t, first, "(since "+clockTime(s.At.Add(-time.Minute-5*time.Second))+")")
	require.Contains(t, first, "· at "+clockTime(s.Running[0].Progress.At))
	m := loaded(t, &recorder{snap: s})
	require.Contains(t, m.View(), "ago", "the terminal view keeps ages")
}

// On a terminal every row of the overview keeps to one line, cut at the width the terminal
// reported (tea.WindowSizeMsg) with "…", so that the sections after it stay on the screen;
// the mission screen shows the reason whole, and plain output keeps it whole on one line.
func TestView_OverviewRowsKeepToOneLine(t *testing.T) {
	snap := sample()
	reason := "profile claude-a rate-limited until 2026-12-01T18:00:50Z, resumes by itself: the window resets at 2026-12-01T18:00:20Z, reported by mission m1 on profile claude-a, plus rate_limit_margin 30s"
	snap.Waiting[0].Why = []engine.Reason{{Code: "rate_limited", Message: reason}}
	m := loaded(t, &recorder{snap: snap})
	for _, width := range []int{60, 97, 130} {
		next, _ := m.Update(tea.WindowSizeMsg{Width: width, Height: 60})
		view := ansi.Strip(next.(Model).View())
		for _, l := range strings.Split(view, "\n") {
			require.LessOrEqual(t, ansi.StringWidth(l), width, "%q", l)
		}
		row := lineWith(view, "rate_limited")
		require.True(t, strings.HasSuffix(row, "…"), "width %d: the row is cut, not wrapped: %q", width, row)
		require.NotContains(t, view, contIndent+"2026", "width %d: no row goes on over a second line", width)
	}
	require.Contains(t, Plain(snap), "rate_limited: "+reason)
	long := strings.Repeat("x", 70) // wrapRow (the mission and log screens): a word longer than a line is broken, not cut
	for _, l := range wrapRow("  msn_c  index  a "+long+" end", 40) {
		require.LessOrEqual(t, ansi.StringWidth(l), 40, "%q", l)
	}
	squeeze := func(s string) string { return strings.Join(strings.Fields(s), "") }
	require.Equal(t, squeeze("msn_c index a "+long+" end"), squeeze(strings.Join(wrapRow("  msn_c  index  a "+long+" end", 40), " ")), "every character kept")
}

// At 80×24 with more rows than the screen holds, the keys reach every section: moving down
// scrolls the list, and on the last row (G) the sections after it (here the open escalation
// and the heading after the last mission) show.
func TestView_At80x24EverySectionCanBeReached(t *testing.T) {
	snap := sample()
	v := &snap.Voyages[0]
	for i := range 12 {
		v.Missions = append(v.Missions, engine.MissionLine{ID: fmt.Sprintf("msn_extra%02d_with_a_long_id", i), Title: "Review: Glossary (review of the glossary page)", State: domain.StateCompleted, Landing: domain.LandingLanded, Summary: "reviewed"})
	}
	snap.Escalations = nil // nothing selectable after WAITING: the end must show all the same
	m := loaded(t, &recorder{snap: snap})
	next, _ := m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	m = next.(Model)
	view := ansi.Strip(m.View())
	require.Len(t, strings.Split(view, "\n"), 24)
	require.NotContains(t, view, "ESCALATIONS (0)", "the list is longer than the screen")
	for _, l := range strings.Split(view, "\n") {
		require.LessOrEqual(t, ansi.StringWidth(l), 80, "%q", l)
	}
	m = press(t, m, "G")
	view = ansi.Strip(m.View())
	for _, want := range []string{"RUNNING (1)", "WAITING (1)", "ESCALATIONS (0)", "▸ msn_c"} {
		require.Contains(t, view, want, "after G:\n%s", view)
	}
	m = press(t, m, "g")
	view = ansi.Strip(m.View())
	require.Contains(t, view, "VOYAGES (1)", "g goes back to the top:\n%s", view)
	require.Contains(t, view, "▸   msn_a")
}

// lineWith is the first line of s holding sub ("" when none does).
func lineWith(s, sub string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			return l
		}
	}
	return ""
}

// agentStdout is what agents of each runtime write on stdout: the agent protocol (with
// heartbeats), Claude Code's stream-json, Codex's exec --json, a line nobody knows and one
// that is not JSON.
const agentStdout = `{"type":"agent.heartbeat","seq":1}
{"type":"task.progress","percent":40,"message":"drafting the outline"}
{"type":"agent.heartbeat","seq":2}
{"type":"task.log","level":"info","message":"looking at the files"}
{"type":"task.checkpoint","checkpoint":{"step":2},"message":"half way"}
{"type":"assistant","message":{"content":[{"type":"text","text":"I will read the README first."},{"type":"tool_use","name":"Bash","input":{"command": "ls -la"}}]}}
{"type":"result","subtype":"success","result":"all done"}
{"type":"item.completed","item":{"type":"command_execution","command":"go test ./..."}}
{"type":"item.completed","item":{"type":"agent_message","text":"the tests pass"}}
{ "type": "something.new", "n": 1 }
plain text from the agent
{"type":"worker.result","status":"completed","summary":"outline written"}
`

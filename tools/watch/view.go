package watch

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/tools"
)

// Styles. Colour is decoration only: the selected row also carries a "▸" marker, and
// NO_COLOR (or a terminal without colour) drops the colours, never the meaning.
var (
	styleTitle     = lipgloss.NewStyle().Bold(true)
	styleHeading   = lipgloss.NewStyle().Bold(true).Underline(true)
	styleSelected  = lipgloss.NewStyle().Reverse(true)
	styleNote      = lipgloss.NewStyle().Faint(true)
	styleAlert     = lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("9"))
	styleHelp      = lipgloss.NewStyle().Faint(true)
	styleEscalated = lipgloss.NewStyle().Foreground(lipgloss.Color("13"))
	stateColours   = map[domain.MissionState]lipgloss.Color{
		domain.StateRunning: "10", domain.StateLeased: "10",
		domain.StatePending: "11", domain.StateInterrupted: "11",
		domain.StateFailed: "9", domain.StateBlocked: "9",
		domain.StateCompleted: "12", domain.StateCancelled: "8",
	}
)

// Help lines per screen.
const (
	helpOverview = "↑/↓ select · enter open mission · l follow its log · r/s/c/a resolve the selected escalation (retry/skip/cancel/acknowledge) · ? help · q quit"
	helpMission  = "l follow the log · r/s/c/a resolve its escalation (retry/skip/cancel/acknowledge) · ↑/↓ scroll · esc back · q quit"
	helpLog      = "↑/↓ pgup/pgdn scroll · f follow the end · esc back · q quit"
	helpMore     = "retry: the blocked missions run again · skip: they are cancelled and marked skipped · cancel: they are cancelled · acknowledge: close the report, missions stay as they are. To add a note, use mcp-scheduler escalations resolve ID --action A --note TEXT."
)

// View draws the current screen.
func (m Model) View() string {
	var body []string
	var help string
	switch m.screen {
	case screenMission:
		body, help = m.missionLines(), helpMission
	case screenLog:
		body, help = m.logLines(), helpLog
	default:
		body, help = m.overviewLines(), helpOverview
	}
	foot := m.footer(help)
	avail := max(m.height-len(foot), 1)
	if len(body) > avail {
		body = body[:avail]
	}
	for len(body) < avail { // the help line sits at the bottom of the screen
		body = append(body, "")
	}
	out := make([]string, 0, len(body)+len(foot))
	for _, l := range append(body, foot...) {
		out = append(out, ansi.Truncate(l, max(m.width, 10), "…"))
	}
	return strings.Join(out, "\n")
}

// footer is the status line (an outcome, an error, a question) and the help line, each
// wrapped to the terminal's width (the help between its " · " items), never cut.
func (m Model) footer(help string) []string {
	var out []string
	styled := func(st lipgloss.Style, lines []string) {
		for _, l := range lines {
			out = append(out, st.Render(l))
		}
	}
	switch {
	case m.confirm != nil:
		styled(styleAlert, wrapRow(fmt.Sprintf("resolve %s with %s? y to confirm, any other key keeps it open", m.confirm.escalation, m.confirm.action), m.width))
	case m.loadErr != nil:
		styled(styleAlert, wrapRow("reading the data dir failed: "+oneLine(m.loadErr.Error()), m.width))
	case m.message != "":
		out = append(out, wrapRow(oneLine(m.message), m.width)...)
	}
	if m.showHelp {
		styled(styleHelp, wrapRow(helpMore, m.width))
	}
	styled(styleHelp, wrapHelp(help, m.width))
	return out
}

// helpSep separates the items of a help line.
const helpSep = " · "

// wrapHelp lays a help line out on lines of at most width columns, breaking between its
// items (an item wider than a line is wrapped by itself, wrapRow).
func wrapHelp(help string, width int) []string {
	var out []string
	line := ""
	for _, item := range strings.Split(help, helpSep) {
		switch {
		case line == "":
			line = item
		case ansi.StringWidth(line+helpSep+item) <= width:
			line += helpSep + item
		default:
			out, line = append(out, line), item
		}
		if ansi.StringWidth(line) > width {
			parts := wrapRow(line, width)
			out, line = append(out, parts[:len(parts)-1]...), strings.TrimLeft(parts[len(parts)-1], " ")
		}
	}
	return append(out, line)
}

// wrapLines wraps each of lines to width (wrapRow), keeping their order.
func wrapLines(lines []string, width int) []string {
	out := make([]string, 0, len(lines))
	for _, l := range lines {
		out = append(out, wrapRow(l, width)...)
	}
	return out
}

func (m Model) headerLines() []string {
	if !m.loaded {
		return []string{styleTitle.Render("mcp-scheduler watch"), "reading the data dir …"}
	}
	h := header(m.snap)
	out := []string{styleTitle.Render(h[0])}
	// the scheduler line is wrapped, not cut: when no scheduler leads, all of it matters
	loop := strings.Split(lipgloss.NewStyle().Width(max(m.width, 20)).Render(h[1]), "\n")
	for _, l := range loop {
		if m.snap.Status.Loop == "idle" {
			l = styleAlert.Render(l)
		}
		out = append(out, l)
	}
	return append(out, wrapLines(h[2:], m.width)...)
}

// overviewLines is the header and the sections, one line per row (cut to the terminal's
// width: the mission screen shows a row's mission whole), scrolled (overviewWindow) so that
// the selected row shows and every section can be reached with the keys.
func (m Model) overviewLines() []string {
	head := append(m.headerLines(), "")
	if !m.loaded {
		return head
	}
	rs := rows(m.snap)
	lines := make([]string, 0, len(rs))
	selAt, n, last := -1, 0, len(selectableRows(rs))-1
	for _, r := range rs {
		if r.kind == rowHeading && len(lines) > 0 {
			lines = append(lines, "")
		}
		text := ansi.Truncate(oneLine(r.text), max(m.width, 10), "…")
		if r.selectable() {
			if n == m.cursor {
				text = ansi.Truncate("▸"+strings.TrimPrefix(oneLine(r.text), " "), max(m.width, 10), "…")
				lines = append(lines, styleSelected.Render(text))
				selAt = len(lines) - 1
				n++
				continue
			}
			n++
		}
		lines = append(lines, styleRow(r, text))
	}
	avail := m.height - len(head) - len(m.footer(helpOverview))
	from := overviewWindow(len(lines), avail, selAt, m.cursor == last)
	return append(head, lines[from:]...)
}

// overviewWindow is the first of n lines to show in avail lines so that the selected line
// (selAt, -1 for none) shows; on the last selectable row (atLast) the window goes on to the
// end of the list, so that the sections after it (a RUNNING or WAITING with no row to select)
// show too.
func overviewWindow(n, avail, selAt int, atLast bool) int {
	if avail <= 0 || n <= avail {
		return 0
	}
	from := 0
	if selAt >= avail {
		from = selAt - avail + 1
	}
	if atLast || selAt < 0 {
		from = max(from, min(n-avail, max(selAt, 0)))
	}
	return from
}

// contIndent is how far a wrapped row's following lines are indented.
const contIndent = "        "

// wrapRow lays a row's text out on lines of at most width columns (the terminal's, from
// tea.WindowSizeMsg): a long row (a waiting reason, the point of the row) goes on over
// following lines, indented by contIndent, instead of being cut. Lines break between words
// only (a time such as 2026-12-01T18:00:20Z stays whole); a word longer than a line is
// broken (ansi.Hardwrap). The row's own column padding is kept on its first line.
func wrapRow(text string, width int) []string {
	width = max(width, 2*len(contIndent))
	if ansi.StringWidth(text) <= width {
		return []string{text}
	}
	var out []string
	limit := func() int { // the first line has the whole width, the following ones less the indent
		if len(out) == 0 {
			return width
		}
		return width - len(contIndent)
	}
	line := ""
	for _, w := range splitKeepingLead(text) {
		switch {
		case line == "":
			line = w
		case ansi.StringWidth(line)+1+ansi.StringWidth(w) <= limit():
			line += " " + w
		default:
			out, line = append(out, line), w
		}
		for ansi.StringWidth(line) > limit() { // a word longer than a line
			parts := strings.SplitN(ansi.Hardwrap(line, limit(), false), "\n", 2)
			out, line = append(out, parts[0]), strings.TrimLeft(parts[1], " ")
		}
	}
	out = append(out, line)
	for i := 1; i < len(out); i++ {
		out[i] = contIndent + out[i]
	}
	return out
}

// splitKeepingLead splits text into words; the first word keeps the text's leading spaces
// and each word the padding after it up to the next one (the row's columns), less one
// space, so that joining with single spaces gives the text back.
func splitKeepingLead(text string) []string {
	var out []string
	start := 0
	for i := 1; i < len(text); i++ {
		if text[i-1] == ' ' && text[i] != ' ' && strings.TrimSpace(text[start:i]) != "" {
			out = append(out, text[start:i-1])
			start = i
		}
	}
	return append(out, text[start:])
}

func styleRow(r row, text string) string {
	switch r.kind {
	case rowHeading:
		return styleHeading.Render(text)
	case rowNote:
		return styleNote.Render(text)
	case rowEscalation:
		return styleEscalated.Render(text)
	case rowMission:
		if c, ok := stateColours[r.state]; ok {
			return lipgloss.NewStyle().Foreground(c).Render(text)
		}
	}
	return text
}

// missionLines is the detail screen: the mission, why it waits, its escalations, attempts,
// landings and brief.
func (m Model) missionLines() []string {
	out := []string{styleTitle.Render("mission " + m.missionID)}
	if m.detailErr != nil {
		return append(out, styleAlert.Render(oneLine(m.detailErr.Error())))
	}
	if m.mission == nil {
		return append(out, "reading …")
	}
	lines := wrapLines(missionText(*m.mission, m.snap), m.width) // a long reason goes on, not cut
	start := min(m.scroll, max(len(lines)-1, 0))
	return append(out, lines[start:]...)
}

// VoyageOf names a mission's voyage and the mission's key in it ("vyg_… (key outline)"), or
// the voyage alone for a mission added without a key (`go --voyage`), as the mission screen
// and `missions show` print it.
func VoyageOf(voyageID, key string) string {
	if key == "" {
		return voyageID
	}
	return voyageID + " (key " + key + ")"
}

// missionText lays out a MissionView as lines (also what the unit tests read).
func missionText(v MissionView, s Snapshot) []string {
	d, mi := v.Detail, v.Detail.Mission
	out := []string{
		mi.Title,
		fmt.Sprintf("state       %s (attempt %d, landing %s)", mi.State, mi.Attempt, mi.Landing),
		fmt.Sprintf("priority    %d   kind %s   review %s   retry budget %d (used %d)", mi.Priority, mi.Kind, mi.Review, mi.RetryBudget, mi.AttemptsUsed),
		"repository  " + mi.Repository,
	}
	if mi.VoyageID != "" {
		out = append(out, "voyage      "+VoyageOf(mi.VoyageID, mi.Key))
	}
	if mi.State.Leased() {
		out = append(out, fmt.Sprintf("agent       %s, epoch %d", mi.Lease.Owner, mi.Lease.Epoch))
		out = append(out, "progress    "+progressText(mi.Progress, s))
	}
	if mi.Decision != nil {
		out = append(out, fmt.Sprintf("decision    %s: %s", mi.Decision.Kind, mi.Decision.Reason))
	}
	for _, r := range d.WhyNotRunning {
		out = append(out, "waiting     "+r.Code+": "+oneLine(r.Message))
	}
	for _, dep := range d.DependsOn {
		out = append(out, fmt.Sprintf("depends on  %s (%s)", dep.DependsOn, dep.Type))
	}
	for _, e := range v.Escalations {
		out = append(out, fmt.Sprintf("escalation  %s (%s, for %s): %s — decide: %s", e.ID, e.Kind, e.Route, oneLine(e.Reason), oneLine(e.DecisionRequired)))
		for _, ev := range e.Evidence {
			out = append(out, "            evidence: "+clip(ev, 200))
		}
	}
	if len(d.Attempts) > 0 {
		out = append(out, "", "attempts")
		for _, a := range d.Attempts {
			sum := a.Summary
			if a.Failure != nil {
				sum = a.Failure.Kind + ": " + a.Failure.Summary
			}
			out = append(out, fmt.Sprintf("  %d  %-20s %-10s %s", a.Attempt, a.Agent, a.Outcome, oneLine(sum)))
		}
	}
	if len(d.Landings) > 0 {
		out = append(out, "", "landings")
		for _, l := range d.Landings {
			out = append(out, fmt.Sprintf("  attempt %d  %s  %s  %s", l.Attempt, l.Status, l.TargetBranch, clip(l.Commit, 12)))
		}
	}
	out = append(out, "", "brief")
	for _, l := range strings.Split(mi.Brief, "\n") {
		out = append(out, "  "+l)
	}
	return shownLines(out)
}

// shownLines is each of lines folded onto one line as people are shown text (oneLine): a
// screen's lines hold titles, names and an agent's words.
func shownLines(lines []string) []string {
	for i, l := range lines {
		lines[i] = oneLine(l)
	}
	return lines
}

// logLines is the log screen: the attempt's events and the tail of its output, wrapped to the
// terminal's width, opening at the end (the newest lines) and following it as lines arrive,
// unless scrolled up (m.scroll lines from the end).
func (m Model) logLines() []string {
	out := []string{styleTitle.Render("log of " + m.missionID)}
	if m.detailErr != nil {
		return append(out, styleAlert.Render(oneLine(m.detailErr.Error())))
	}
	if m.log == nil {
		return append(out, "reading …")
	}
	lines := wrapLines(logText(*m.log), m.width)
	avail := max(m.height-len(out)-len(m.footer(helpLog)), 1)
	end := max(len(lines)-m.scroll, min(avail, len(lines)))
	start := max(end-avail, 0)
	return append(out, lines[start:end]...)
}

// logText lays out a MissionLog as lines: a heading, the events, the output tail.
func logText(l tools.MissionLog) []string {
	head := fmt.Sprintf("attempt %d · %s", l.Attempt, l.State)
	if l.Attempt == 0 {
		return []string{head, "it has not run yet: nothing to show"}
	}
	out := []string{head, "", "events"}
	for _, e := range l.Events {
		out = append(out, "  "+eventText(e)) // wrapped between words by logLines, never cut
	}
	if l.Output == nil {
		return append(out, "", "no output files (a pull-mode attempt reports through tools only)")
	}
	out = append(out, "", fmt.Sprintf("output (stdout, %d bytes)", l.Output.StdoutBytes))
	for _, s := range strings.Split(strings.TrimRight(l.Output.Stdout, "\n"), "\n") {
		for _, r := range tools.ReadableLines(s) { // heartbeats dropped, JSON told as text
			out = append(out, "  "+r)
		}
	}
	if strings.TrimSpace(l.Output.Stderr) != "" {
		out = append(out, "", fmt.Sprintf("stderr (%d bytes)", l.Output.StderrBytes))
		for _, s := range strings.Split(strings.TrimRight(l.Output.Stderr, "\n"), "\n") {
			out = append(out, "  "+s)
		}
	}
	return shownLines(out)
}

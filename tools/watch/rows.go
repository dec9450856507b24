package watch

import (
	"fmt"
	"strings"
	"time"

	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/tools"
)

// rowKind says what a row of the overview is, for its style and whether it can be selected.
type rowKind int

const (
	rowText       rowKind = iota // a plain line
	rowHeading                   // a section's title
	rowMission                   // a mission: selectable, opens its detail
	rowEscalation                // an open escalation: selectable, can be resolved
	rowNote                      // a secondary line (a further reason, "none")
)

// row is one line of the overview with what it points at.
type row struct {
	kind rowKind
	text string
	// mission is the mission a row is about (a mission row, or an escalation's first mission).
	mission string
	// escalation is the open escalation a row is about.
	escalation string
	// state colours a mission row.
	state domain.MissionState
}

// selectable reports whether the cursor can stop on the row.
func (r row) selectable() bool { return r.kind == rowMission || r.kind == rowEscalation }

// header is the overview's first lines: the time, whether a scheduler leads (said plainly
// when none does), the mission counts.
func header(s Snapshot) []string {
	loop := "leading: " + strings.TrimPrefix(s.Status.Loop, "leading: ")
	if s.Status.Loop == "idle" {
		loop = "NO SCHEDULER LEADS — " + tools.LoopIdleText
	} else if l := s.Status.Leader; l != nil && l.Owner != "" {
		loop += " (" + l.Owner + ")"
	}
	if s.Status.Paused {
		loop += " · paused: nothing new starts (mcp-scheduler resume)"
	}
	var counts []string
	for _, st := range domain.AllStates() {
		if n := s.Status.Counts[st]; n > 0 {
			counts = append(counts, fmt.Sprintf("%d %s", n, st))
		}
	}
	if len(counts) == 0 {
		counts = []string{"none yet"}
	}
	return []string{
		"mcp-scheduler watch · " + s.At.Local().Format("15:04:05"),
		"scheduler   " + oneLine(loop), // the leader's owner is a name a process gave
		fmt.Sprintf("missions    %d: %s · escalations %d open", s.Status.Total, strings.Join(counts, ", "), s.Status.OpenEscalations),
	}
}

// rows lays the snapshot out as the overview's sections: voyages with their missions,
// running agents, waiting missions, open escalations.
func rows(s Snapshot) []row {
	var out []row
	out = append(out, voyageRows(s)...)
	out = append(out, runningRows(s)...)
	out = append(out, waitingRows(s)...)
	return append(out, escalationRows(s.Escalations)...)
}

func heading(title string, n int) row {
	return row{kind: rowHeading, text: fmt.Sprintf("%s (%d)", title, n)}
}

func none() row { return row{kind: rowNote, text: "  none"} }

func voyageRows(s Snapshot) []row {
	vs := s.Voyages
	out := []row{heading("VOYAGES", len(vs))}
	if len(vs) == 0 {
		return append(out, none())
	}
	for _, v := range vs {
		done, total := v.Counts[domain.StateCompleted], 0
		for _, n := range v.Counts {
			total += n
		}
		out = append(out, row{kind: rowText, text: fmt.Sprintf("  %s  %-9s %s  (%d of %d completed)", v.ID, v.State, v.Title, done, total)})
		for _, m := range v.Missions {
			text := fmt.Sprintf("    %s  %-24s %-11s %-12s", m.ID, s.name(m.Key, m.Title), m.State, m.Landing)
			if len(m.Why) > 0 {
				text += " " + m.Why[0].Code + ": " + m.Why[0].Message
			} else if m.Summary != "" {
				text += " " + m.Summary
			}
			out = append(out, row{kind: rowMission, text: text, mission: m.ID, state: m.State})
		}
	}
	return out
}

func runningRows(s Snapshot) []row {
	out := []row{heading("RUNNING", len(s.Running))}
	if len(s.Running) == 0 {
		return append(out, none())
	}
	for _, r := range s.Running {
		text := fmt.Sprintf("  %s  %-24s %-8s attempt %d  agent %s  ", r.ID, s.name(r.Key, r.Title), r.State, r.Attempt, r.Agent)
		text += progressText(r.Progress, s)
		out = append(out, row{kind: rowMission, text: text, mission: r.ID, state: r.State})
	}
	return out
}

// progressText is an agent's last progress line with its age.
func progressText(p *domain.Progress, s Snapshot) string {
	if p == nil {
		return "(no progress reported yet)"
	}
	text := p.Message
	if p.Percent != nil {
		text = fmt.Sprintf("%.0f%% %s", *p.Percent, text)
	}
	if s.clock {
		return strings.TrimSpace(text) + " · at " + clockTime(p.At)
	}
	return strings.TrimSpace(text) + " · " + ago(p.At, s.At)
}

func waitingRows(s Snapshot) []row {
	out := []row{heading("WAITING", len(s.Waiting)+s.MoreWaiting)}
	if len(s.Waiting) == 0 {
		return append(out, none())
	}
	for _, w := range s.Waiting {
		text := fmt.Sprintf("  %s  %-24s %-11s", w.ID, s.name(w.Key, w.Title), w.State)
		if len(w.Why) == 0 {
			out = append(out, row{kind: rowMission, text: text + " " + noReason, mission: w.ID, state: w.State})
		}
		for i, r := range w.Why {
			since := ""
			if !r.Since.IsZero() {
				since = " (since " + ago(r.Since, s.At) + ")"
				if s.clock {
					since = " (since " + clockTime(r.Since) + ")"
				}
			}
			if i == 0 {
				out = append(out, row{kind: rowMission, text: text + " " + r.Code + ": " + r.Message + since, mission: w.ID, state: w.State})
				continue
			}
			out = append(out, row{kind: rowNote, text: "      and " + r.Code + ": " + r.Message + since})
		}
	}
	if s.MoreWaiting > 0 {
		out = append(out, row{kind: rowNote, text: fmt.Sprintf("  … and %d more (mcp-scheduler missions list --state pending)", s.MoreWaiting)})
	}
	return out
}

// noReason is what a waiting mission with no reason says: the planner has not looked at it
// yet, or it is being started.
const noReason = "no reason recorded: it can start at the scheduler's next tick"

func escalationRows(es []domain.Escalation) []row {
	out := []row{heading("ESCALATIONS", len(es))}
	if len(es) == 0 {
		return append(out, none())
	}
	for _, e := range es {
		first := ""
		if len(e.MissionIDs) > 0 {
			first = e.MissionIDs[0]
		}
		text := fmt.Sprintf("  %s  %-15s for %s: %s", e.ID, e.Kind, strings.Join(e.MissionIDs, " "), e.Reason)
		if e.DecisionRequired != "" {
			text += " — decide: " + e.DecisionRequired
		}
		out = append(out, row{kind: rowEscalation, text: text, mission: first, escalation: e.ID})
	}
	return out
}

// Plain is the snapshot as plain text, no escape codes: what watch prints when its output is
// not a terminal, one snapshot after another.
func Plain(s Snapshot) string {
	s.clock = true // clock times, not ages: the text changes only when what it shows does
	s.whole = true // whole titles: a pipe has no width to fit
	var b strings.Builder
	for _, h := range header(s) {
		b.WriteString(h + "\n")
	}
	for _, r := range rows(s) {
		if r.kind == rowHeading {
			b.WriteString("\n")
		}
		b.WriteString(oneLine(r.text) + "\n")
	}
	return b.String()
}

// nameColumn is how wide a mission's name is in a row (a longer one is cut on a terminal).
const nameColumn = 24

// name is how a mission is named in a row: label, cut to nameColumn unless s.whole.
func (s Snapshot) name(key, title string) string {
	if s.whole {
		return oneLine(label(key, title))
	}
	return clip(label(key, title), nameColumn)
}

// label is how a mission is named in a row: its dispatch key, else its title.
func label(key, title string) string {
	if key != "" {
		return key
	}
	return title
}

// clip shortens s to at most n runes, marking the cut with "…".
func clip(s string, n int) string {
	r := []rune(oneLine(s))
	if len(r) <= n {
		return string(r)
	}
	return string(r[:n-1]) + "…"
}

// oneLine folds a text onto one line, as people are shown text: newlines, carriage returns
// and tabs become spaces (they would break the layout), and every other character that does
// not show or would drive the terminal (an escape, a right-to-left override, a zero-width
// space) is written as an escape such as <U+202E> (domain.Shown, as the command line and the
// dashboard write it).
func oneLine(s string) string {
	if strings.ContainsAny(s, "\n\r\t") {
		s = strings.Map(func(r rune) rune {
			if r == '\n' || r == '\r' || r == '\t' {
				return ' '
			}
			return r
		}, s)
	}
	return domain.Shown(s)
}

// ago says how long before now t was, coarsely ("4s ago", "3m ago", "2h ago").
// clockTime is t as a local clock time, the form of the header's time.
func clockTime(t time.Time) string { return t.Local().Format("15:04:05") }

func ago(t, now time.Time) string {
	d := now.Sub(t)
	switch {
	case d < time.Second:
		return "just now"
	case d < time.Minute:
		return fmt.Sprintf("%ds ago", int(d/time.Second))
	case d < time.Hour:
		return fmt.Sprintf("%dm ago", int(d/time.Minute))
	default:
		return fmt.Sprintf("%dh ago", int(d/time.Hour))
	}
}

package main

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/e2e/testenv"
	"github.com/mcp-scheduler/mcp-scheduler/engine"
)

// `watch` in a real 80×24 pseudo-terminal: the key help shows whole (wrapped, not cut), the
// mission screen wraps a long question, and the log screen of a mission with more output than
// the screen holds opens at its end.
func TestWatch_In80Columns(t *testing.T) {
	w := newWatchSandbox(t)
	question := "which of the three candidate titles should the second page of the handbook carry, given that the first page already uses the word guide?"
	var brief strings.Builder
	for i := range 40 {
		fmt.Fprintf(&brief, "@progress %d \"step %02d of the long task\"\n", i+1, i)
	}
	brief.WriteString("@block \"" + question + "\"")
	d, err := w.eng.Dispatch(context.Background(), engine.VoyageSpec{Title: "narrow", Missions: []engine.MissionSpec{
		{Key: "long", Title: "a long log", Brief: brief.String()}}}, "test")
	require.NoError(t, err)
	id := d.IDs["long"]

	cmd := exec.Command(binary, "watch", "--interval", "1s")
	cmd.Dir, cmd.Env = w.repo, append(append([]string{}, w.env...), "TERM=xterm-256color")
	term := startInTerminal(t, cmd, 80, 24)
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			<-exited
		}
		term.close()
	}()

	scr := term.waitScreen("the overview with its whole key help", "VOYAGES (1)", "(retry/skip/cancel/acknowledge)", "q quit")
	require.NotContains(t, lastLines(scr, 3), "…", "the help is not cut:\n%s", scr)
	term.waitScreen("the mission blocked, its row selected", "▸   "+id, "blocked")
	term.press("\r")
	scr = term.waitScreen("the mission screen", "mission "+id, "esc back", "q quit")
	testenv.WaitFor(t, "the whole question, wrapped", func() bool {
		return strings.Contains(strings.Join(strings.Fields(term.screen()), " "), question)
	})
	term.press("l")
	scr = term.waitScreen("the log's end", "log of "+id, "result blocked", "f follow the end")
	require.NotContains(t, scr, "step 00 of the long task", "the log opens at its end, not its top:\n%s", scr)
	term.press("q")
	require.NoError(t, <-exited, "q exits 0")
}

// lastLines is the last n non-empty lines of a screen.
func lastLines(scr string, n int) string {
	var out []string
	lines := strings.Split(strings.TrimRight(scr, "\n "), "\n")
	for i := len(lines) - 1; i >= 0 && len(out) < n; i-- {
		if strings.TrimSpace(lines[i]) != "" {
			out = append(out, lines[i])
		}
	}
	return strings.Join(out, "\n")
}

// `watch` in a real 80×24 pseudo-terminal with a voyage of more missions than the screen
// holds: each row keeps to one line (cut with "…", not wrapped onto a second one), so RUNNING
// shows on the first screen, and G scrolls the list to its last sections.
func TestWatch_In80x24EverySectionCanBeReached(t *testing.T) {
	w := newWatchSandbox(t)
	specs := []engine.MissionSpec{{Key: "lead", Title: "Lead: the chapter everything else waits for", WriteArea: []string{"lead.md"},
		Brief: "@progress 10 \"working on the lead chapter\"\n@hang"}}
	for i := range 8 {
		specs = append(specs, engine.MissionSpec{Key: fmt.Sprintf("review-%d", i), Title: fmt.Sprintf("Review: Glossary part %d (review of the glossary)", i),
			WriteArea: []string{fmt.Sprintf("r%d.md", i)}, DependsOn: []string{"lead"}, Brief: "@done reviewed"})
	}
	d, err := w.eng.Dispatch(context.Background(), engine.VoyageSpec{Title: "eighty", Missions: specs}, "test")
	require.NoError(t, err)
	defer w.cancelVoyage(d.Voyage.ID) // the lead's agent hangs until cancelled

	cmd := exec.Command(binary, "watch", "--interval", "1s")
	cmd.Dir, cmd.Env = w.repo, append(append([]string{}, w.env...), "TERM=xterm-256color")
	term := startInTerminal(t, cmd, 80, 24)
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			<-exited
		}
		term.close()
	}()

	scr := term.waitScreen("the lead running, on the first screen", "VOYAGES (1)", "RUNNING (1)", "WAITING (8)")
	require.True(t, strings.HasSuffix(strings.TrimSpace(lineWith(scr, "review-0")), "…"), "a long row is cut at 80 columns:\n%s", scr)
	for _, l := range strings.Split(scr, "\n") {
		require.False(t, strings.HasPrefix(l, "        ") && strings.TrimSpace(l) != "", "no row goes on over a second line: %q\n%s", l, scr)
	}
	term.press("G")
	scr = term.waitScreen("the end of the list after G", "WAITING (8)", "ESCALATIONS (0)", "q quit")
	require.Contains(t, selectedRow(scr), "review-7                 pending", "G selects the last waiting mission:\n%s", scr)
	term.press("g")
	term.waitScreen("the top again after g", "VOYAGES (1)", "eighty")
	term.press("q")
	require.NoError(t, <-exited, "q exits 0")
}

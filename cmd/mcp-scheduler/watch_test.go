package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/charmbracelet/x/vt"
	"github.com/creack/pty"
	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/e2e/testenv"
	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/storage/teststore"
)

// terminal is a real pseudo-terminal with a terminal emulator reading what the program
// draws on it, so that a test reads the screen a person would see.
type terminal struct {
	t    *testing.T
	ptmx *os.File
	mu   sync.Mutex
	emu  *vt.Emulator
	wg   sync.WaitGroup
}

func (s *terminal) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.emu.Write(p)
}

// screen is the emulator's screen as text.
func (s *terminal) screen() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.emu.String()
}

// startInTerminal runs the binary in a cols×rows pseudo-terminal.
func startInTerminal(t *testing.T, cmd *exec.Cmd, cols, rows int) *terminal {
	t.Helper()
	ptmx, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: uint16(cols), Rows: uint16(rows)})
	require.NoError(t, err)
	term := &terminal{t: t, ptmx: ptmx, emu: vt.NewEmulator(cols, rows)}
	term.wg.Go(func() { _, _ = io.Copy(term, ptmx) })     // what the program draws
	term.wg.Go(func() { _, _ = io.Copy(ptmx, term.emu) }) // the terminal's answers to its queries
	return term
}

// close ends the emulator's answer pipe and the pseudo-terminal, and waits for the copies.
func (s *terminal) close() {
	_ = s.emu.InputPipe().(*io.PipeWriter).CloseWithError(io.EOF)
	_ = s.ptmx.Close()
	s.wg.Wait()
}

// press types keys, as a person does.
func (s *terminal) press(keys string) {
	s.t.Helper()
	_, err := s.ptmx.WriteString(keys)
	require.NoError(s.t, err)
}

// waitScreen waits until the screen shows every one of want.
func (s *terminal) waitScreen(what string, want ...string) string {
	s.t.Helper()
	var scr string
	testenv.WaitForState(s.t, fmt.Sprintf("the screen to show %s (%q)", what, want), func() bool {
		scr = s.screen()
		for _, w := range want {
			if !strings.Contains(scr, w) {
				return false
			}
		}
		return true
	}, func() string { return "it shows:\n" + scr })
	return scr
}

// watchSandbox is a sandbox whose config runs the bundled reference agent, with a daemon
// leading its data dir; dispatch adds a voyage: "first" reports progress, sleeps and
// completes; "second" (after it) asks for a decision and blocks.
type watchSandbox struct {
	*sandbox
	daemon *proc
	eng    *engine.Engine
	ids    map[string]string
	voyage string
}

func newWatchSandbox(t *testing.T) *watchSandbox {
	t.Helper()
	s := newSandbox(t)
	cfg := filepath.Join(s.home, "config", "mcp-scheduler", "config.toml")
	require.NoError(t, os.MkdirAll(filepath.Dir(cfg), 0o700))
	require.NoError(t, os.WriteFile(cfg, []byte(`[scheduler]
tick = "100ms"
[[profiles]]
name = "ref"
runtime = "ndjson"
command = ["{mcp_scheduler}", "reference-agent"]
env = ["PATH", "HOME"]
`), 0o600))
	w := &watchSandbox{sandbox: s}
	w.daemon = s.start(nil, "daemon")
	testenv.WaitFor(t, "the daemon to lead", func() bool {
		st := cliJSON[struct {
			Loop string `json:"loop"`
		}](s, "status")
		return strings.HasPrefix(st.Loop, "leading")
	})
	st := teststore.OpenAt(t, filepath.Join(s.dataDir, "mcp-scheduler.db")) // the binary's store
	w.eng = engine.New(st, engine.Options{DefaultRepository: s.repo})
	t.Cleanup(w.stopDaemon)
	return w
}

// dispatch dispatches the voyage (as a Main Agent's dispatch_voyage does, from another
// process than the daemon).
func (w *watchSandbox) dispatch() {
	w.t.Helper()
	d, err := w.eng.Dispatch(context.Background(), engine.VoyageSpec{Title: "watched handbook", Missions: []engine.MissionSpec{
		{Key: "first", Title: "first page", WriteArea: []string{"first.md"},
			Brief: "@progress 50 \"writing the first page\"\n@sleep 5s\n@write first.md \"one\\n\"\n@commit first page\n@done first page written"},
		{Key: "second", Title: "second page", WriteArea: []string{"second.md"}, DependsOn: []string{"first"},
			Brief: "@block \"which title should the second page have?\""},
	}}, "test")
	require.NoError(w.t, err)
	w.ids, w.voyage = d.IDs, d.Voyage.ID
}

// stopDaemon interrupts the daemon and waits for it (it stops its agents' supervision).
func (w *watchSandbox) stopDaemon() {
	if w.daemon.cmd.ProcessState == nil {
		_ = w.daemon.cmd.Process.Signal(os.Interrupt)
		w.daemon.wait()
	}
}

// cancelVoyage cancels a voyage while the daemon still supervises its agents, and waits until
// they have ended (an agent told to @hang would otherwise outlive the test).
func (w *watchSandbox) cancelVoyage(id string) {
	w.t.Helper()
	_, err := w.eng.CancelVoyage(context.Background(), id, "the test is over", "test")
	require.NoError(w.t, err)
	waitAgentsGone(w.t, w.dataDir)
}

func (w *watchSandbox) mission(key string) domain.Mission {
	w.t.Helper()
	m, err := w.eng.Mission(context.Background(), w.ids[key])
	require.NoError(w.t, err)
	return m
}

// `watch` in a real pseudo-terminal, against a data dir another process (a daemon running
// the reference agent) leads: the screen shows the voyage and its missions and follows them
// as they change; enter opens a mission, l its log; resolving the escalation from the view
// moves the blocked mission on; q exits 0.
func TestWatch_InAPseudoTerminal(t *testing.T) {
	w := newWatchSandbox(t)
	cmd := exec.Command(binary, "watch", "--interval", "1s")
	cmd.Dir, cmd.Env = w.repo, append(append([]string{}, w.env...), "TERM=xterm-256color")
	term := startInTerminal(t, cmd, 180, 45)
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			<-exited
		}
		term.close()
	}()

	term.waitScreen("the empty data dir", "VOYAGES (0)", "ESCALATIONS (0)", "q quit")
	w.dispatch()
	first, second := w.ids["first"], w.ids["second"]
	term.waitScreen("the voyage and its missions", "VOYAGES (1)", w.voyage, "watched handbook", first, second, "q quit")
	term.waitScreen("the first mission running with its progress line", "RUNNING (1)", "writing the first page", "agent ref")
	// Nothing is typed: the screen follows the voyage as it changes.
	esc := term.waitEscalation(w)
	require.Contains(t, term.screen(), "leading", "another process leads, and the view says so")

	term.selectRow(esc.ID)
	term.press("\r")
	term.waitScreen("the blocked mission's detail", "mission "+second, "second page", "escalation  "+esc.ID, "brief", "esc back")
	term.press("l")
	scr := term.waitScreen("its log", "log of "+second, "mission.blocked", "f follow the end", "output (stdout")
	_, stdout, _ := strings.Cut(scr, "output (stdout")
	require.NotContains(t, stdout, `"type":`, "the agent's output is told as text, not NDJSON:\n%s", scr)
	require.Contains(t, stdout, "result blocked: ", scr)
	term.press("\x1b")
	term.waitScreen("back to the mission", "mission "+second, "brief")
	term.press("\x1b")
	term.waitScreen("back to the overview", "VOYAGES (1)", "▸ "+esc.ID)

	term.press("s")
	term.waitScreen("the question", "resolve "+esc.ID+" with skip? y to confirm")
	term.press("y")
	term.waitScreen("the resolution", esc.ID+" resolved: skip")
	testenv.WaitFor(t, "the blocked mission to move on", func() bool { return w.mission("second").State == domain.StateCancelled })
	testenv.WaitFor(t, "the screen to show it cancelled and the escalation gone", func() bool {
		scr := term.screen()
		return strings.Contains(lineWith(scr, second), "cancelled") && !strings.Contains(scr, "  "+esc.ID+"  decision")
	})
	require.True(t, w.mission("second").Skipped)
	got, err := w.eng.Escalation(context.Background(), esc.ID)
	require.NoError(t, err)
	require.Equal(t, domain.EscalationResolved, got.State)
	require.Equal(t, w.actorName(), got.ResolvedBy, "resolved as the CLI does, in the person's name")

	term.press("q")
	err, _ = testenv.ReceiveState(t, "watch to exit on q", exited, func() string { return "the screen shows:\n" + term.screen() })
	require.NoError(t, err, "q exits 0")
}

func (w *watchSandbox) actorName() string {
	if u := w.getenv("USER"); u != "" {
		return "cli:" + u
	}
	return "cli"
}

// waitEscalation waits until the screen lists the decision the second mission asks for,
// without a key being pressed, and returns that escalation.
func (s *terminal) waitEscalation(w *watchSandbox) domain.Escalation {
	s.t.Helper()
	s.waitScreen("the second mission blocked with an escalation", "which title should the second page have?")
	es, err := w.eng.Escalations(context.Background(), engine.EscalationFilter{State: domain.EscalationOpen, MissionID: w.ids["second"], Limit: 10})
	require.NoError(s.t, err)
	for _, e := range es {
		if e.Kind == "decision" {
			s.waitScreen("the escalation's row", "ESCALATIONS (", "  "+e.ID+"  decision")
			return e
		}
	}
	s.t.Fatalf("no open decision escalation for the second mission: %+v", es)
	return domain.Escalation{}
}

// selectRow moves the cursor up from the last row until the row naming id is selected.
func (s *terminal) selectRow(id string) {
	s.t.Helper()
	s.press("G")
	s.waitScreen("the last row selected", "▸ esc_")
	for range 50 {
		sel := selectedRow(s.screen())
		if strings.Contains(sel, id) {
			return
		}
		s.press("k")
		testenv.WaitFor(s.t, "the selection to move", func() bool { return selectedRow(s.screen()) != sel })
	}
	s.t.Fatalf("could not select %s; the screen shows:\n%s", id, s.screen())
}

// selectedRow is the screen's line marked as selected ("▸").
func selectedRow(scr string) string { return lineWith(scr, "▸") }

// lineWith is the first line of scr holding sub ("" when none does).
func lineWith(scr, sub string) string {
	for _, l := range strings.Split(scr, "\n") {
		if strings.Contains(l, sub) {
			return l
		}
	}
	return ""
}

// With stdout not a terminal, watch prints plain snapshots (no escape codes): one at once
// and another when what it shows changes, until interrupted (exit 0); --once prints one.
func TestWatch_PipedPrintsPlainSnapshots(t *testing.T) {
	w := newWatchSandbox(t)
	w.dispatch()
	out, errs, code := w.cli("watch", "--once")
	require.Equal(t, 0, code, errs)
	require.NotContains(t, out, "\x1b")
	require.Contains(t, out, "VOYAGES (1)")
	require.Contains(t, out, w.voyage)
	require.Equal(t, 1, strings.Count(out, "mcp-scheduler watch ·"), "--once prints one snapshot")

	cmd := exec.Command(binary, "watch", "--interval", "1s")
	cmd.Dir, cmd.Env = w.repo, w.env
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	lines := make(chan string, 10000)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var seen strings.Builder
	waitLine := func(what string, cond func(string) bool) {
		t.Helper()
		for !cond(seen.String()) {
			l, ok := testenv.ReceiveState(t, what, lines, func() string { return "watch printed:\n" + seen.String() })
			require.True(t, ok, "watch stopped; it printed:\n%s", seen.String())
			seen.WriteString(l + "\n")
		}
	}
	waitLine("the first snapshot", func(s string) bool { return strings.Contains(s, "ESCALATIONS (") })
	// a change made by another process prints a new snapshot with it
	made, errs, code := w.cli("go", "a mission made while watching")
	require.Equal(t, 0, code, errs)
	id := regexp.MustCompile(`msn_[0-9A-Z]{26}`).FindString(made)
	require.NotEmpty(t, id, "go names the mission it made: %s", made)
	// Its row shows its id and its whole title (28 characters: a terminal cuts it to its
	// 24-column name, a pipe has no width to fit, so grep finds the whole title).
	waitLine("a snapshot with the new mission", func(s string) bool { return strings.Contains(s, id) })
	require.Contains(t, lineWith(seen.String(), id), "a mission made while watching", "piped rows name missions whole")
	require.NotContains(t, seen.String(), "a mission made while wa…")
	require.GreaterOrEqual(t, strings.Count(seen.String(), "mcp-scheduler watch ·"), 2)
	// the voyage goes on while watched; its agents are done once the second mission blocks
	waitLine("the second mission blocked", func(s string) bool { return strings.Contains(s, "which title should the second page have?") })
	testenv.WaitFor(t, "the second mission to block", func() bool { return w.mission("second").State == domain.StateBlocked })
	require.NotContains(t, seen.String(), "\x1b", "plain text: no escape codes")
	require.NoError(t, cmd.Process.Signal(os.Interrupt))
	for range lines {
	}
	require.NoError(t, cmd.Wait(), "interrupted, it exits 0")
}

// An interval that would make watch a tight poll is refused as a usage mistake, naming the
// flag and the least it takes.
func TestWatch_RefusesATightInterval(t *testing.T) {
	s := newSandbox(t)
	_, errs, code := s.cli("watch", "--interval", "10ms")
	require.Equal(t, 2, code)
	require.Contains(t, errs, "--interval 10ms is too short: give 200ms or more")
}

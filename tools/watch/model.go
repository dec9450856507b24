package watch

import (
	"context"
	"fmt"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/tools"
)

// screen is which view the model shows.
type screen int

const (
	screenOverview screen = iota // voyages, running, waiting, escalations
	screenMission                // one mission in detail
	screenLog                    // one mission's latest attempt's log, following it
)

// Resolution keys: the key that asks to resolve the selected escalation with each action.
var resolveKeys = map[string]string{
	"r": engine.ResolveRetry,
	"s": engine.ResolveSkip,
	"c": engine.ResolveCancel,
	"a": engine.ResolveAcknowledge,
}

// Options configure a Model and Run.
type Options struct {
	// Source reads the data and resolves escalations (required).
	Source Source
	// Changes receives a value after every committed change to the data dir, by this process
	// or another (the engine's hub with WatchExternal); Run refreshes the view then. nil: only
	// Interval refreshes it.
	Changes <-chan struct{}
	// Interval is the longest Run lets the view go without a refresh, so that what changes
	// with time alone (a leader's lease running out, "since" ages) shows (default 2 s).
	Interval time.Duration
	// Context bounds the reads and the resolution (default context.Background()).
	Context context.Context
}

// Model is the watch view (a bubbletea model). Update and View are pure: reads and the
// resolution run in commands returned by Update.
type Model struct {
	opt           Options
	width, height int

	snap    Snapshot
	loaded  bool
	loadErr error
	seq     int  // the number of the last snapshot read asked for
	applied int  // the number of the snapshot shown
	loading bool // a snapshot read runs: at most one at a time
	dirty   bool // a refresh came while it ran: read again when it ends

	screen screen
	cursor int // index of the selected row among the overview's selectable rows
	// selMission and selEscalation name what the cursor is on, so that a refresh that moves
	// rows keeps the same thing selected.
	selMission, selEscalation string

	missionID string // the mission of the detail and log screens
	mission   *MissionView
	log       *tools.MissionLog
	logFrom   screen // where esc goes back to from the log
	scroll    int    // lines scrolled up from the end (log) or down from the top (mission)
	detailErr error

	confirm  *pendingResolve // a resolution asked for, waiting for "y"
	message  string          // the last outcome shown on the status line
	showHelp bool
}

// pendingResolve is a resolution waiting to be confirmed.
type pendingResolve struct{ escalation, action string }

// Messages the commands send back to Update.
type (
	snapshotMsg struct {
		seq  int
		snap Snapshot
		err  error
	}
	missionMsg struct {
		id   string
		view MissionView
		err  error
	}
	logMsg struct {
		id  string
		log tools.MissionLog
		err error
	}
	resolvedMsg struct {
		id, action string
		esc        domain.Escalation
		err        error
	}
	// Refresh asks the model to read again (Run sends it on every change and interval).
	Refresh struct{}
)

// NewModel returns the view in its overview, before its first read.
func NewModel(opt Options) Model {
	if opt.Interval <= 0 {
		opt.Interval = 2 * time.Second
	}
	if opt.Context == nil {
		opt.Context = context.Background()
	}
	return Model{opt: opt, width: 100, height: 30, loading: true} // Init reads the first snapshot
}

// Init reads the first snapshot.
func (m Model) Init() tea.Cmd { return m.loadSnapshot(0) }

// Update applies one message and returns the commands that read or resolve.
func (m Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		return m, nil
	case tea.KeyMsg:
		return m.key(msg.String())
	case Refresh:
		return m.refresh()
	case snapshotMsg:
		m = m.applySnapshot(msg)
		if m.loading = false; m.dirty { // changes came while it was read: read again
			m.dirty = false
			return m.refresh()
		}
		return m, nil
	case missionMsg:
		if msg.id == m.missionID {
			m.detailErr = msg.err
			if msg.err == nil {
				v := msg.view
				m.mission = &v
			}
		}
		return m, nil
	case logMsg:
		if msg.id == m.missionID {
			m.detailErr = msg.err
			if msg.err == nil {
				l := msg.log
				m.log = &l
			}
		}
		return m, nil
	case resolvedMsg:
		if msg.err != nil {
			m.message = fmt.Sprintf("resolve %s: %v", msg.id, msg.err)
		} else {
			m.message = fmt.Sprintf("%s resolved: %s", msg.esc.ID, msg.esc.Resolution)
		}
		return m.refresh()
	}
	return m, nil
}

// refresh asks for a new snapshot and, on the detail screens, their data. While a snapshot
// read runs it only notes that another is due, so that a burst of changes costs one read
// more, not one each.
func (m Model) refresh() (Model, tea.Cmd) {
	var cmds []tea.Cmd
	if m.loading {
		m.dirty = true
	} else {
		m.seq++
		m.loading = true
		cmds = append(cmds, m.loadSnapshot(m.seq))
	}
	switch m.screen {
	case screenMission:
		cmds = append(cmds, m.loadMission(m.missionID))
	case screenLog:
		cmds = append(cmds, m.loadLog(m.missionID))
	}
	return m, tea.Batch(cmds...)
}

// applySnapshot shows a snapshot unless a newer one is already shown, keeping the selection
// on the same mission or escalation when it is still there.
func (m Model) applySnapshot(msg snapshotMsg) Model {
	if msg.seq < m.applied {
		return m
	}
	m.applied = msg.seq
	m.loadErr = msg.err
	if msg.err != nil {
		return m
	}
	m.snap, m.loaded = msg.snap, true
	sel := selectableRows(rows(m.snap))
	for i, r := range sel {
		if (m.selEscalation != "" && r.escalation == m.selEscalation) || (m.selEscalation == "" && m.selMission != "" && r.kind == rowMission && r.mission == m.selMission) {
			m.cursor = i
			return m
		}
	}
	m.cursor = clamp(m.cursor, 0, len(sel)-1)
	m.remember(sel)
	return m
}

// remember records what the cursor is on.
func (m *Model) remember(sel []row) {
	m.selMission, m.selEscalation = "", ""
	if m.cursor >= 0 && m.cursor < len(sel) {
		m.selMission, m.selEscalation = sel[m.cursor].mission, sel[m.cursor].escalation
	}
}

// selected is the overview's selected row (ok false when nothing can be selected).
func (m Model) selected() (row, bool) {
	sel := selectableRows(rows(m.snap))
	if m.cursor < 0 || m.cursor >= len(sel) {
		return row{}, false
	}
	return sel[m.cursor], true
}

func selectableRows(rs []row) []row {
	var out []row
	for _, r := range rs {
		if r.selectable() {
			out = append(out, r)
		}
	}
	return out
}

// key handles one key press.
func (m Model) key(k string) (tea.Model, tea.Cmd) {
	if m.confirm != nil {
		c := m.confirm
		m.confirm = nil
		if k == "y" || k == "Y" {
			m.message = fmt.Sprintf("resolving %s with %s …", c.escalation, c.action)
			return m, m.resolve(c.escalation, c.action)
		}
		m.message = c.escalation + " kept open"
		return m, nil
	}
	switch k {
	case "q", "ctrl+c":
		return m, tea.Quit
	case "?":
		m.showHelp = !m.showHelp
		return m, nil
	case "esc", "backspace":
		return m.back(), nil
	}
	if action, ok := resolveKeys[k]; ok {
		return m.askResolve(action), nil
	}
	switch m.screen {
	case screenOverview:
		return m.overviewKey(k)
	case screenMission:
		return m.missionKey(k)
	default:
		return m.logKey(k), nil
	}
}

func (m Model) overviewKey(k string) (tea.Model, tea.Cmd) {
	sel := selectableRows(rows(m.snap))
	switch k {
	case "up", "k":
		m.cursor = clamp(m.cursor-1, 0, len(sel)-1)
	case "down", "j":
		m.cursor = clamp(m.cursor+1, 0, len(sel)-1)
	case "home", "g":
		m.cursor = 0
	case "end", "G":
		m.cursor = max(len(sel)-1, 0)
	case "enter", "l":
		r, ok := m.selected()
		if !ok || r.mission == "" {
			m.message = "nothing selected: move to a mission with ↑/↓ first"
			return m, nil
		}
		if k == "enter" {
			return m.openMission(r.mission)
		}
		return m.openLog(r.mission, screenOverview)
	default:
		return m, nil
	}
	m.remember(sel)
	return m, nil
}

func (m Model) missionKey(k string) (tea.Model, tea.Cmd) {
	switch k {
	case "l":
		return m.openLog(m.missionID, screenMission)
	case "up", "k":
		m.scroll = max(m.scroll-1, 0)
	case "down", "j":
		m.scroll++
	case "home", "g":
		m.scroll = 0
	}
	return m, nil
}

func (m Model) logKey(k string) Model {
	switch k {
	case "up", "k":
		m.scroll++
	case "down", "j":
		m.scroll = max(m.scroll-1, 0)
	case "pgup":
		m.scroll += max(m.height-6, 1)
	case "pgdown":
		m.scroll = max(m.scroll-max(m.height-6, 1), 0)
	case "end", "G", "f":
		m.scroll = 0
	}
	return m
}

func (m Model) openMission(id string) (Model, tea.Cmd) {
	m.screen, m.missionID, m.mission, m.detailErr, m.scroll = screenMission, id, nil, nil, 0
	return m, m.loadMission(id)
}

func (m Model) openLog(id string, from screen) (Model, tea.Cmd) {
	if m.missionID != id {
		m.mission = nil
	}
	m.screen, m.missionID, m.log, m.detailErr, m.scroll, m.logFrom = screenLog, id, nil, nil, 0, from
	return m, m.loadLog(id)
}

// back leaves the detail screens (the log goes back to where it was opened from).
func (m Model) back() Model {
	m.message, m.scroll = "", 0
	switch m.screen {
	case screenLog:
		m.screen = m.logFrom
	case screenMission:
		m.screen = screenOverview
	}
	return m
}

// askResolve asks to confirm resolving the escalation in view: the selected one on the
// overview, the mission's open one on the detail screens.
func (m Model) askResolve(action string) Model {
	id := ""
	switch m.screen {
	case screenOverview:
		if r, ok := m.selected(); ok {
			id = r.escalation
		}
	default:
		if m.mission != nil && len(m.mission.Escalations) > 0 {
			id = m.mission.Escalations[0].ID
		}
	}
	if id == "" {
		m.message = "no escalation selected: move to one under ESCALATIONS (or open a mission that has one) to resolve it"
		return m
	}
	m.confirm = &pendingResolve{escalation: id, action: action}
	return m
}

// Commands.

func (m Model) loadSnapshot(seq int) tea.Cmd {
	src, ctx := m.opt.Source, m.opt.Context
	return func() tea.Msg {
		s, err := src.Snapshot(ctx)
		return snapshotMsg{seq: seq, snap: s, err: err}
	}
}

func (m Model) loadMission(id string) tea.Cmd {
	src, ctx := m.opt.Source, m.opt.Context
	return func() tea.Msg {
		v, err := src.Mission(ctx, id)
		return missionMsg{id: id, view: v, err: err}
	}
}

func (m Model) loadLog(id string) tea.Cmd {
	src, ctx := m.opt.Source, m.opt.Context
	return func() tea.Msg {
		l, err := src.Log(ctx, id)
		return logMsg{id: id, log: l, err: err}
	}
}

func (m Model) resolve(id, action string) tea.Cmd {
	src, ctx := m.opt.Source, m.opt.Context
	return func() tea.Msg {
		e, err := src.Resolve(ctx, id, action)
		return resolvedMsg{id: id, action: action, esc: e, err: err}
	}
}

func clamp(v, lo, hi int) int {
	if hi < lo {
		return lo
	}
	return min(max(v, lo), hi)
}

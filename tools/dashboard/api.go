package dashboard

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/tools"
)

// The JSON API the pages read. Each endpoint is one engine read operation (the same the MCP
// tools use), so the dashboard and a Main Agent see the same facts and the same reasons.

// listLimit bounds every list the pages show.
const listLimit = 200

// logTail is how much of an attempt's output the mission page shows (bytes, per stream).
const logTail = 16 << 10

// Overview is the header of every page: the status tool's figures and the recent voyages.
type Overview struct {
	Status  tools.StatusResult `json:"status"`
	Voyages []domain.Voyage    `json:"voyages"`
	// Badges count every mission by group (badges), as each voyage page counts its own.
	Badges []Badge `json:"badges"`
	// Login is true when the server has a token (the page offers to log out).
	Login bool `json:"login"`
	// LoopIdle is tools.LoopIdleText while no scheduler loop leads the data dir (status's
	// loop "idle": nothing is launched or landed), as `status` and `watch` say it; empty
	// while one leads.
	LoopIdle string `json:"loop_idle,omitempty"`
}

func (h *Handler) overview(w http.ResponseWriter, r *http.Request) {
	st, err := tools.ReadStatus(r.Context(), h.deps.Engine)
	if err != nil {
		h.fail(w, err)
		return
	}
	vs, err := h.deps.Engine.Voyages(r.Context(), nil, listLimit)
	if err != nil {
		h.fail(w, err)
		return
	}
	o := Overview{Status: st, Voyages: vs, Badges: badges(st.Counts), Login: !h.auth.open()}
	if st.Loop == "idle" {
		o.LoopIdle = tools.LoopIdleText
	}
	writeJSON(w, o)
}

func (h *Handler) voyages(w http.ResponseWriter, r *http.Request) {
	vs, err := h.deps.Engine.Voyages(r.Context(), nil, listLimit)
	h.answer(w, vs, err)
}

// LoosePage lists the missions outside any voyage that have not finished (a mission queued
// with `mcp-scheduler go` belongs to none), for the voyages page: without it they would show
// in the header's counts only.
type LoosePage struct {
	Missions []engine.MissionLine `json:"missions"`
	// More is true when some were left out (the first listLimit are shown).
	More bool `json:"more"`
}

func (h *Handler) looseMissions(w http.ResponseWriter, r *http.Request) {
	ms, more, err := h.deps.Engine.LooseMissions(r.Context(), listLimit)
	if ms == nil {
		ms = []engine.MissionLine{}
	}
	h.answer(w, LoosePage{Missions: ms, More: more}, err)
}

// VoyagePage is the voyage page's data: the voyage graph and, when a budget holds the voyage
// or one of its missions, the voyage's spend and limits for the form that raises them.
type VoyagePage struct {
	engine.VoyageGraph
	// Escalations are the voyage's open escalations in the dashboard's words (they hide
	// VoyageDetail's).
	Escalations []EscalationView `json:"escalations,omitempty"`
	// Badges count the voyage's missions by group, as the header counts every mission.
	Badges []Badge     `json:"badges"`
	Budget *BudgetView `json:"budget,omitempty"`
}

func (h *Handler) voyage(w http.ResponseWriter, r *http.Request) {
	g, err := h.deps.Engine.VoyageGraph(r.Context(), r.PathValue("id"))
	if err != nil {
		h.fail(w, err)
		return
	}
	p := VoyagePage{VoyageGraph: g, Escalations: escalationViews(g.Escalations), Badges: badges(g.Counts)}
	if voyageBudgetHeld(g) {
		b := voyageBudget(g.Voyage)
		p.Budget = &b
	}
	writeJSON(w, p)
}

// MissionPage is the mission page's data: get_mission's detail plus every escalation that
// names the mission (open and resolved).
type MissionPage struct {
	engine.MissionDetail
	MissionWords
	Escalations []EscalationView `json:"escalations"`
	// Actions are the buttons the page offers, by the engine's own rules: "retry" (a failed,
	// blocked or cancelled mission), "skip" (one not finished), "approve_landing" (a landing
	// that waits for approval).
	Actions []string `json:"actions"`
	// Budgets are the spend and limits a person may raise, present only while a budget
	// holds or blocks the mission: its own, then its voyage's (BudgetView).
	Budgets []BudgetView `json:"budgets,omitempty"`
}

// missionActions are the actions the engine would accept on m now.
func missionActions(m domain.Mission) []string {
	out := []string{}
	if m.State.Retryable() {
		out = append(out, "retry")
	}
	if !m.State.Terminal() {
		out = append(out, "skip")
	}
	if m.Landing == domain.LandingApproval || m.Landing == domain.LandingWaiting {
		out = append(out, "approve_landing")
	}
	return out
}

func (h *Handler) mission(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	d, err := h.deps.Engine.GetMission(ctx, r.PathValue("id"))
	if err != nil {
		h.fail(w, err)
		return
	}
	escs, err := h.deps.Engine.Escalations(ctx, engine.EscalationFilter{MissionID: d.Mission.ID, Limit: listLimit})
	if err != nil {
		h.fail(w, err)
		return
	}
	budgets, err := h.missionBudgets(ctx, d, escs)
	h.answer(w, MissionPage{MissionDetail: d, MissionWords: missionWords(d), Escalations: escalationViews(escs), Actions: missionActions(d.Mission), Budgets: budgets}, err)
}

// MissionLog is the output tail of one attempt.
type MissionLog struct {
	Attempt int               `json:"attempt"`
	Log     *tools.AttemptLog `json:"log,omitempty"`
	// Readable is the stdout tail as a person reads it (tools.ReadableLines: messages, tool
	// uses, progress, the result; heartbeats and pings left out), oldest first; Log keeps
	// the raw bytes.
	Readable []string `json:"readable,omitempty"`
	// Unavailable says why there is no log to show (no attempt yet, logs not configured).
	Unavailable string `json:"unavailable,omitempty"`
}

func (h *Handler) missionLog(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	m, err := h.deps.Engine.Mission(ctx, r.PathValue("id"))
	if err != nil {
		h.fail(w, err)
		return
	}
	out := MissionLog{Attempt: m.Attempt}
	if a := r.URL.Query().Get("attempt"); a != "" {
		n, err := strconv.Atoi(a)
		if err != nil || n < 1 || n > m.Attempt {
			writeError(w, http.StatusBadRequest, "attempt: give a number from 1 to "+strconv.Itoa(m.Attempt)+" (the mission's attempts)")
			return
		}
		out.Attempt = n
	}
	switch {
	case h.deps.Logs == nil:
		out.Unavailable = "this server keeps no attempt logs"
	case out.Attempt == 0:
		out.Unavailable = "no attempt has started yet"
	default:
		l, err := h.deps.Logs.AttemptLog(ctx, m, out.Attempt, logTail)
		if errors.Is(err, tools.ErrNoLog) {
			out.Unavailable = "attempt " + strconv.Itoa(out.Attempt) + " left no output files (a pull-mode agent reports through tools)"
			break
		}
		if err != nil {
			h.fail(w, err)
			return
		}
		out.Log = &l
		out.Readable = readable(l.Stdout)
	}
	writeJSON(w, out)
}

// MissionDiff is the latest attempt's change, or why there is none to show.
type MissionDiff struct {
	Diff        *tools.Diff `json:"diff,omitempty"`
	Unavailable string      `json:"unavailable,omitempty"`
}

func (h *Handler) missionDiff(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	m, err := h.deps.Engine.Mission(ctx, r.PathValue("id"))
	if err != nil {
		h.fail(w, err)
		return
	}
	if h.deps.Workspaces == nil {
		writeJSON(w, MissionDiff{Unavailable: "this server has no workspaces configured"})
		return
	}
	if m.Attempt == 0 {
		writeJSON(w, MissionDiff{Unavailable: "no attempt has started yet"})
		return
	}
	d, err := h.deps.Workspaces.Diff(ctx, m)
	if err != nil {
		if domain.CallerError(err) {
			writeJSON(w, MissionDiff{Unavailable: err.Error()})
			return
		}
		h.fail(w, err)
		return
	}
	writeJSON(w, MissionDiff{Diff: &d})
}

func (h *Handler) escalations(w http.ResponseWriter, r *http.Request) {
	state := r.URL.Query().Get("state")
	switch state {
	case "":
		state = domain.EscalationOpen
	case "all":
		state = ""
	case domain.EscalationOpen, domain.EscalationResolved:
	default:
		writeError(w, http.StatusBadRequest, "state: give open, resolved or all")
		return
	}
	escs, err := h.deps.Engine.Escalations(r.Context(), engine.EscalationFilter{State: state, Limit: listLimit})
	h.answer(w, escalationViews(escs), err)
}

// AgentsPage is what runs where and what waits to land.
type AgentsPage struct {
	Agents []domain.Agent `json:"agents"`
	// Running are the leased and running missions (agent, attempt, usage so far).
	Running []domain.Mission `json:"running"`
	// Landing are the completed missions not landed yet, each with why it waits.
	Landing []LandingItem `json:"landing"`
	// Spend is what each profile spent today: on attempts that ended today and on those in
	// flight (engine.SpendToday, the figures the profiles' daily caps count).
	Spend []engine.ProfileSpend `json:"spend"`
	// CostUSD is today's spend of every profile, ended and in flight, in US dollars.
	CostUSD float64 `json:"cost_usd"`
}

// LandingItem is a mission waiting to land and why (get_mission's why_not_running:
// Engine.LandingReasons).
type LandingItem struct {
	Mission domain.Mission  `json:"mission"`
	Why     []engine.Reason `json:"why,omitempty"`
}

func (h *Handler) agents(w http.ResponseWriter, r *http.Request) {
	p, err := h.agentsPage(r.Context())
	h.answer(w, p, err)
}

func (h *Handler) agentsPage(ctx context.Context) (AgentsPage, error) {
	var p AgentsPage
	var err error
	e := h.deps.Engine
	if p.Agents, err = e.Agents(ctx); err != nil {
		return p, err
	}
	if p.Running, err = e.Leased(ctx); err != nil {
		return p, err
	}
	lv, err := e.LandingView(ctx)
	if err != nil {
		return p, err
	}
	for _, m := range append(lv.Queue, lv.Awaiting...) {
		if len(p.Landing) == listLimit {
			break
		}
		why, err := e.LandingReasons(ctx, m.ID)
		if err != nil {
			return p, err
		}
		p.Landing = append(p.Landing, LandingItem{Mission: m, Why: why})
	}
	if p.Spend, err = e.SpendToday(ctx); err != nil {
		return p, err
	}
	for _, s := range p.Spend {
		p.CostUSD += s.Total().CostUSD
	}
	return p, nil
}

// answer writes v, or the error.
func (h *Handler) answer(w http.ResponseWriter, v any, err error) {
	if err != nil {
		h.fail(w, err)
		return
	}
	writeJSON(w, v)
}

// fail answers an engine error: a caller's mistake with its own text (404 for an unknown id,
// 409 for an illegal transition, 400 otherwise), a server fault with 500 and a log record.
func (h *Handler) fail(w http.ResponseWriter, err error) {
	var nf *domain.NotFoundError
	switch {
	case errors.As(err, &nf) || errors.Is(err, domain.ErrNotFound) || errors.Is(err, domain.ErrUnknownMission):
		writeError(w, http.StatusNotFound, err.Error())
	case errors.Is(err, domain.ErrIllegalTransition) || errors.Is(err, domain.ErrLeaseLost) || errors.Is(err, domain.ErrPaused):
		writeError(w, http.StatusConflict, err.Error())
	case domain.CallerError(err):
		writeError(w, http.StatusBadRequest, err.Error())
	case errors.Is(err, context.Canceled):
		// the browser went away
	default:
		h.log.Error("dashboard request failed", "err", err)
		writeError(w, http.StatusInternalServerError, "server error: "+err.Error())
	}
}

// APIError is the body of every refused API request.
type APIError struct {
	Error string `json:"error"`
}

func writeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(APIError{Error: msg}) // a write error means the browser went away
}

func writeJSON(w http.ResponseWriter, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "encode: "+err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(b) // a write error means the browser went away
}

// readable is the stdout tail (cut at a line start) told line by line (tools.ReadableLines).
func readable(stdout string) []string {
	var out []string
	for _, l := range strings.Split(stdout, "\n") {
		if strings.TrimSpace(l) == "" {
			continue
		}
		out = append(out, tools.ReadableLines(l)...)
	}
	return out
}

package dashboard

import (
	"regexp"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// The engine's escalation texts are written for a Main Agent: the safe next step and the
// decision name MCP tools ("resolve_escalation with action retry once fixed", "get_mission_diff
// msn_…"). On the dashboard the same step is told as what a person does there: the button or
// the page. This file is the one place that translates (pageText, used by escalationViews);
// the engine's sentence stays the single source, only its tool names change. A tool with no
// page action keeps its name (the step is taken from an MCP client or the command line).

// pageRules rewrite a tool with its argument first, in order ($1 is what the rule captured).
var pageRules = []struct {
	re   *regexp.Regexp
	repl string
}{
	{regexp.MustCompile(`\bthen resolve_escalation with (?:action )?(retry|skip|cancel|acknowledge)\b`), "then press $1 on this escalation"},
	{regexp.MustCompile(`\bresolve_escalation with (?:action )?(retry|skip|cancel|acknowledge)\b`), "the $1 button of this escalation"},
	{regexp.MustCompile(`\bresolve this escalation with action (retry|skip|cancel|acknowledge)\b`), "press $1 on this escalation"},
	{regexp.MustCompile(`\bupdate_mission or update_voyage (?:cost_limit_usd|token_limit)\b`), "the budget form on the mission's or the voyage's page"},
	{regexp.MustCompile(`\bthe mission's \(update_mission\)`), "the mission's (its page's budget form)"},
	{regexp.MustCompile(`\bupdate_mission (?:cost_limit_usd|token_limit)\b`), "the mission page's budget form"},
	{regexp.MustCompile(`\bupdate_voyage (?:cost_limit_usd|token_limit)\b`), "the voyage page's budget form"},
	{regexp.MustCompile(`\bget_mission_diff (msn_[0-9A-Za-z]+)`), "the diff on mission $1's page"},
	{regexp.MustCompile(`\bget_mission (msn_[0-9A-Za-z]+)`), "mission $1's page"},
	{regexp.MustCompile(`\bretry_mission (msn_[0-9A-Za-z]+)`), "the Retry button on mission $1's page"},
	{regexp.MustCompile(`\bvoyage_status (vyg_[0-9A-Za-z]+)`), "voyage $1's page"},
}

// pageWords maps every MCP tool to what a person does on the dashboard instead, or to ""
// when the dashboard has no such action (the name then stays). pagewords_test.go checks
// that every registered tool has an entry.
var pageWords = map[string]string{
	"resolve_escalation": "the buttons of this escalation", "retry_mission": "the mission page's Retry button",
	"cancel_mission": "the cancel button of this escalation", "approve_landing": "the approve landing button",
	"get_mission": "the mission's page", "get_mission_diff": "the diff on the mission's page",
	"get_mission_log": "the output on the mission's page", "voyage_status": "the voyage's page",
	"list_escalations": "the Escalations page", "list_agents": "the Agents page",
	"update_voyage": "the voyage page's budget form",
	// No page action: a deadline, a priority, a brief are changed from an MCP client or the
	// command line (the dashboard's forms change budgets only), and so on.
	"update_mission": "", "create_mission": "", "list_missions": "", "cancel_voyage": "", "get_events": "",
	"status": "", "resume_scheduler": "", "pause_scheduler": "", "escalate": "", "block_mission": "",
	"claim_mission": "", "heartbeat": "", "report_progress": "", "checkpoint_mission": "", "yield_mission": "",
	"complete_mission": "", "fail_mission": "", "dispatch": "",
}

// toolName finds tool names as whole words (they all hold an underscore).
var toolName = regexp.MustCompile(`\b[a-z]+(?:_[a-z]+)+\b`)

// pageText tells an engine sentence in the dashboard's words.
func pageText(s string) string {
	for _, r := range pageRules {
		s = r.re.ReplaceAllString(s, r.repl)
	}
	return toolName.ReplaceAllStringFunc(s, func(w string) string {
		if p := pageWords[w]; p != "" {
			return p
		}
		return w
	})
}

// EscalationView is an escalation as the dashboard shows it: the engine's record, plus its
// safe next step, decision, reason and evidence lines (in the record's order) told in the
// dashboard's words (pageText).
type EscalationView struct {
	domain.Escalation
	PageNextStep string   `json:"page_next_step,omitempty"`
	PageDecision string   `json:"page_decision,omitempty"`
	PageReason   string   `json:"page_reason,omitempty"`
	PageEvidence []string `json:"page_evidence,omitempty"`
}

// escalationViews tells escs in the dashboard's words.
func escalationViews(escs []domain.Escalation) []EscalationView {
	out := make([]EscalationView, 0, len(escs))
	for _, e := range escs {
		out = append(out, EscalationView{Escalation: e, PageNextStep: pageText(e.SafeNextStep), PageDecision: pageText(e.DecisionRequired),
			PageReason: pageText(e.Reason), PageEvidence: pageTexts(e.Evidence)})
	}
	return out
}

// pageTexts is pageText of each of ss, in order (nil for none).
func pageTexts(ss []string) []string {
	if len(ss) == 0 {
		return nil
	}
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = pageText(s)
	}
	return out
}

// MissionWords are the mission page's other engine sentences told in the dashboard's words
// (pageText), beside get_mission's own fields, which stay as the engine wrote them: the last
// failure's summary, each ended attempt's failure summary (by attempt number; only attempts
// that failed) and each reason it waits (in why_not_running's order).
type MissionWords struct {
	PageLastFailure     string         `json:"page_last_failure,omitempty"`
	PageAttemptFailures map[int]string `json:"page_attempt_failures,omitempty"`
	PageWhyNotRunning   []string       `json:"page_why_not_running,omitempty"`
}

// missionWords tells d's failure summaries and reasons in the dashboard's words.
func missionWords(d engine.MissionDetail) MissionWords {
	var w MissionWords
	if f := d.Mission.LastFailure; f != nil {
		w.PageLastFailure = pageText(f.Summary)
	}
	for _, a := range d.Attempts {
		if a.Failure != nil && a.Failure.Summary != "" {
			if w.PageAttemptFailures == nil {
				w.PageAttemptFailures = map[int]string{}
			}
			w.PageAttemptFailures[a.Attempt] = pageText(a.Failure.Summary)
		}
	}
	for _, r := range d.WhyNotRunning {
		w.PageWhyNotRunning = append(w.PageWhyNotRunning, pageText(r.Message))
	}
	return w
}

package main

import (
	"fmt"
	"io"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// printMissionBudget prints missions show's budget lines: the cost spent beside the cost limit
// and the tokens spent beside the token limit, each when a limit is set or something was
// spent (ended attempts; the attempt in flight is shown apart, as "running").
func printMissionBudget(w io.Writer, d engine.MissionDetail) {
	m := d.Mission
	if m.Usage.CostUSD > 0 || m.CostLimitUSD > 0 {
		fmt.Fprintf(w, "cost        %s (limit %s)\n", fmt.Sprintf("$%.4f", m.Usage.CostUSD), limitText(m.CostLimitUSD > 0, fmt.Sprintf("$%.4f", m.CostLimitUSD)))
	}
	if m.Usage.Tokens() > 0 || d.TokenLimit > 0 {
		fmt.Fprintf(w, "tokens      %d (limit %s)\n", m.Usage.Tokens(), limitText(d.TokenLimit > 0, fmt.Sprint(d.TokenLimit)))
	}
	if r := d.RunningUsage; r != nil {
		fmt.Fprintf(w, "running     $%.4f, %d tokens so far in the attempt in flight\n", r.CostUSD, r.Tokens())
	}
}

// limitText is a limit as printed: its value, or "none" when it is not set.
func limitText(set bool, v string) string {
	if !set {
		return "none"
	}
	return v
}

// stillSpentWarning is the warning line a budget update prints when the spend still reaches
// a limit after it (engine.CheckSpend, the rule that holds and blocks work): the hold's own
// sentence in the command line's words, and what stays as it is; "" when nothing is spent.
// ids fill the commands' arguments (cliText).
func stillSpentWarning(br *engine.Breach, stays string, ids ...string) string {
	if br == nil {
		return ""
	}
	return fmt.Sprintf("warning: the budget is still spent: %s; %s\n", cliText(br.HoldMessage(), ids...), stays)
}

// missionSpentWarning is stillSpentWarning for mission d after an update that changed its
// cost or token limit: its own limits against what its ended attempts spent.
func missionSpentWarning(d engine.MissionDetail) string {
	m := d.Mission
	stays := "nothing more of it starts"
	if m.State == domain.StateBlocked {
		stays = "it stays blocked"
	}
	return stillSpentWarning(engine.CheckSpend(engine.Spend{Mission: &m, MissionSpent: m.Usage, MissionTokens: d.TokenLimit}), stays, m.ID, m.VoyageID)
}

// voyageSpentWarning is stillSpentWarning for voyage v after an update of its limits.
func voyageSpentWarning(v domain.Voyage) string {
	return stillSpentWarning(engine.CheckSpend(engine.Spend{Voyage: &v, VoyageSpent: v.Usage}), "its missions that have not started stay held", v.ID)
}

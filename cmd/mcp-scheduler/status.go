package main

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/tools"
)

func newStatusCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "status",
		Short: "Show missions per state, voyages, escalations and the scheduler loop",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := a.open(cmd.Context()); err != nil {
				return err
			}
			st, err := tools.ReadStatus(cmd.Context(), a.eng)
			if err != nil {
				return err
			}
			if a.jsonOut {
				return writeJSON(a.out, st)
			}
			var counts []string
			for _, s := range domain.AllStates() {
				counts = append(counts, fmt.Sprintf("%s %d", s, st.Counts[s]))
			}
			paused := ""
			if st.Paused {
				paused = " (paused: nothing new starts; mcp-scheduler resume)"
			}
			printShown(a.out, "missions    %d: %s\n", st.Total, strings.Join(counts, ", "))
			loop := st.Loop
			if loop == "idle" { // no process runs the loop: say so, and what starts one
				loop = tools.LoopIdleText
			}
			printShown(a.out, "loop        %s%s\n", cliText(loop), paused)
			printShown(a.out, "voyages     open %d, active %d, blocked %d\n", st.Voyages[domain.VoyageOpen],
				st.Voyages[domain.VoyageActive], st.Voyages[domain.VoyageBlocked])
			printShown(a.out, "escalations %d open\n", st.OpenEscalations)
			printShown(a.out, "agents      %d known\n", st.Agents)
			if line := nodesLine(st.Nodes, st.Leader); line != "" {
				printShown(a.out, "nodes       %s\n", line)
			}
			if line := landingLine(st.LandingLocks, a.eng.Now()); line != "" {
				printShown(a.out, "landing     %s\n", line)
			}
			if line := a.notifyLine(cmd.Context()); line != "" {
				printShown(a.out, "notify      %s\n", line)
			}
			if w := waitingLine(st.Waiting); w != "" {
				printShown(a.out, "waiting     %s (mcp-scheduler missions show <id> says why)\n", w)
			}
			if len(st.Stalled) > 0 {
				printShown(a.out, "stalled     %d running without output past their stall_threshold: %s (mcp-scheduler missions show <id>)\n",
					len(st.Stalled), strings.Join(st.Stalled, ", "))
			}
			if len(st.ActiveVoyages) > 0 {
				fmt.Fprintln(a.out)
				t := newTable(a.out, "VOYAGE", "STATE", "TITLE")
				for _, v := range st.ActiveVoyages {
					t.row(v.ID, v.State, v.Title)
				}
				return t.flush()
			}
			return nil
		},
	}
}

// waitingLine lists the waiting missions per reason code, most first ("" when none waits).
func waitingLine(w map[string]int) string {
	codes := make([]string, 0, len(w))
	for c := range w {
		codes = append(codes, c)
	}
	sort.Slice(codes, func(i, j int) bool {
		if w[codes[i]] != w[codes[j]] {
			return w[codes[i]] > w[codes[j]]
		}
		return codes[i] < codes[j]
	})
	parts := make([]string, len(codes))
	for i, c := range codes {
		parts[i] = fmt.Sprintf("%d %s", w[c], c)
	}
	return strings.Join(parts, ", ")
}

// nodesLine lists a cluster's nodes: the live ones (the leader marked) and then the others
// ("" on a single node).
func nodesLine(ns []tools.NodeItem, leader *engine.Leader) string {
	var live, gone []string
	for _, n := range ns {
		switch {
		case !n.Live:
			gone = append(gone, n.Name)
		case leader != nil && leader.Owner == n.Owner:
			live = append(live, n.Name+" (leader)")
		default:
			live = append(live, n.Name)
		}
	}
	if len(live) == 0 && len(gone) == 0 {
		return ""
	}
	line := fmt.Sprintf("%d live: %s", len(live), orNone(strings.Join(live, ", ")))
	if len(gone) > 0 {
		line += fmt.Sprintf("; not running: %s", strings.Join(gone, ", "))
	}
	return line
}

// landingLine lists the live landing locks ("" when none is held).
func landingLine(locks []tools.LandingLockItem, now time.Time) string {
	parts := make([]string, len(locks))
	for i, l := range locks {
		parts[i] = landingLockText(l.Target, l.Node, l.ExpiresAt, now)
	}
	return strings.Join(parts, ", ")
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

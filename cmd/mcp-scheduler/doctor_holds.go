package main

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/scheduler"
	"github.com/mcp-scheduler/mcp-scheduler/tools"
)

// holdChecks are the doctor's findings about work held back: each resource reading against
// its threshold, as the scheduler's resource gate reads it (scheduler.ReadResources and
// ResourceCap, the same functions), and the waiting missions per reason.
func (a *app) holdChecks(ctx context.Context) []check {
	ours, err := a.ourRunning(ctx)
	if err != nil {
		return []check{{Name: "resources", Detail: err.Error()}}
	}
	cfg := a.schedulerConfig(ctx)
	readings := scheduler.ReadResources(cfg.Resources, a.cfg.DataDir, ours)
	var out []check
	for _, r := range readings {
		out = append(out, readingCheck(r, ours))
	}
	limit := max(cfg.MaxConcurrency, 1)
	if c, why, ok := scheduler.ResourceCap(readings, limit); !ok {
		out = append(out, check{Name: "resource gate", OK: true, Warn: true,
			Detail: fmt.Sprintf("%s: at most %d of our agents start at once (max_concurrency %d); never fewer than one", why, c, limit)})
	}
	return append(append(out, a.waitingCheck(ctx)), a.rateChecks(ctx)...)
}

func readingCheck(r scheduler.Reading, ours int) check {
	c := check{Name: "resource " + r.Name, OK: true}
	switch {
	case r.Err != "":
		c.Warn, c.Detail = true, "cannot read: "+r.Err
		return c
	case r.Name == "load_per_cpu":
		c.Detail = fmt.Sprintf("%.2f (1-minute load per CPU %.2f, less %d of our agents)", r.Value, r.Raw, ours)
	default:
		c.Detail = fmt.Sprintf("%.0f MB", r.Value)
	}
	switch {
	case r.Threshold == 0:
		c.Detail += "; no threshold"
	case r.Short:
		c.Warn = true
		c.Detail += fmt.Sprintf("; past its threshold %g: fewer agents start", r.Threshold)
	default:
		c.Detail += fmt.Sprintf("; threshold %g", r.Threshold)
	}
	return c
}

// ourRunning counts the leased missions of configured managed profiles (the gate subtracts
// their load).
func (a *app) ourRunning(ctx context.Context) (int, error) {
	leased, err := a.eng.Leased(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, m := range leased {
		if slices.ContainsFunc(a.cfg.Profiles, func(p agent.Profile) bool { return p.Name == m.Profile }) {
			n++
		}
	}
	return n, nil
}

// waitingCheck reports the waiting missions per reason, warning about the reasons that need
// someone to act (no loop, no agent) or that come from the machine (resources).
func (a *app) waitingCheck(ctx context.Context) check {
	st, err := tools.ReadStatus(ctx, a.eng)
	if err != nil {
		return check{Name: "waiting missions", Detail: err.Error()}
	}
	c := check{Name: "waiting missions", OK: true, Detail: "none held back"}
	if len(st.Waiting) == 0 {
		return c
	}
	codes := make([]string, 0, len(st.Waiting))
	for code := range st.Waiting {
		codes = append(codes, code)
	}
	slices.Sort(codes)
	var parts []string
	for _, code := range codes {
		parts = append(parts, fmt.Sprintf("%d %s", st.Waiting[code], code))
		switch code {
		case engine.WhyNoLeader, engine.WhyUnavailable, engine.WhyWaitingAgent, engine.WhyResources:
			c.Warn = true
		}
	}
	c.Detail = strings.Join(parts, ", ") + " (mcp-scheduler missions show <id> says why)"
	return c
}

package scheduler

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// stopStrays stops every agent still running under this node's data dir (runner.Strays)
// whose attempt is not its mission's current lease here: the mission moved on while this
// process was down (another node, or this one after a reap, took a newer attempt; it was
// cancelled, completed or purged). Such an agent's result would be refused by its epoch, so
// letting it run only spends its tokens and holds its workspace. Each stop is logged at warn
// with the attempt and the mission's current lease. The attempt of a live lease this node
// holds is left to the re-attach pass. Run at the end of the re-attach pass.
func (r *recovery) stopStrays(ctx context.Context) error {
	strays, err := r.run.Strays()
	if err != nil {
		return err
	}
	var errs []error
	for _, st := range strays {
		m, err := r.eng.Mission(ctx, st.MissionID)
		if err != nil && !errors.Is(err, domain.ErrNotFound) {
			errs = append(errs, fmt.Errorf("stray agent of %s attempt %d: %w", st.MissionID, st.Attempt, err))
			continue
		}
		if err == nil && r.holds(m, st.Attempt) {
			continue
		}
		r.log.Warn("stopping an agent left running by an attempt that is not its mission's any more: its result would be refused",
			append([]any{"mission_id", st.MissionID, "attempt", st.Attempt, "agent_pid", st.Record.AgentPID, "node", r.cfg.Node},
				currentLease(m, err)...)...)
		if err := r.run.StopStray(st, r.graceOf(m)); err != nil {
			errs = append(errs, fmt.Errorf("stop the stray agent of %s attempt %d: %w", st.MissionID, st.Attempt, err))
		}
	}
	return errors.Join(errs...)
}

// holds reports whether attempt k is m's live lease on this node (the re-attach pass's).
func (r *recovery) holds(m domain.Mission, k int) bool {
	live := m.State == domain.StateLeased || m.State == domain.StateRunning
	return live && m.Attempt == k && (r.cfg.Node == "" || m.Node == r.cfg.Node)
}

// graceOf is the SIGTERM grace of m's profile (the default profile's when it is unknown).
func (r *recovery) graceOf(m domain.Mission) time.Duration {
	if p, ok := r.cfg.profile(m.Profile); ok {
		return p.WithDefaults().Grace.D()
	}
	return agent.Profile{}.WithDefaults().Grace.D()
}

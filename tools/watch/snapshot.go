package watch

import (
	"context"
	"sort"
	"time"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/tools"
)

// Snapshot is what the watch view shows at one moment, read from the engine's read
// operations only (the ones status, voyage_status, get_mission and list_escalations use).
type Snapshot struct {
	// At is when it was read (the engine's clock, UTC).
	At time.Time
	// Status is the glance `mcp-scheduler status` prints: counts, pause, whether a loop leads.
	Status tools.StatusResult
	// Voyages are the unfinished voyages (newest first, at most MaxVoyages) and then the
	// most recently finished ones (at most MaxFinishedVoyages), each with its missions.
	Voyages []Voyage
	// Running are the leased and running missions with the agent holding them and its last
	// progress line.
	Running []Running
	// Waiting are the missions that could run but do not (pending, interrupted) and the
	// completed ones whose landing waits, each with why; at most MaxWaiting.
	Waiting []Waiting
	// MoreWaiting counts the waiting missions left out past MaxWaiting.
	MoreWaiting int
	// Escalations are the open escalations, oldest first, at most MaxEscalations.
	Escalations []domain.Escalation

	// clock says times as clock times (15:04:05) instead of ages ("5s ago"): Plain's form, so
	// that a snapshot printed to a pipe changes only when what it shows does.
	clock bool
	// whole names missions by their whole key or title instead of cutting it to the column:
	// Plain's form, so that piped rows are whole (grep finds them).
	whole bool
}

// Voyage is one voyage with its missions (voyage_status's view).
type Voyage struct {
	ID       string
	Title    string
	State    domain.VoyageState
	Counts   map[domain.MissionState]int
	Missions []engine.MissionLine
}

// Running is a mission an agent holds now.
type Running struct {
	ID, Key, Title, VoyageID string
	State                    domain.MissionState
	Attempt                  int
	// Agent is the lease owner (a managed profile's agent or a pull-mode agent id).
	Agent string
	// Progress is the agent's last progress line (nil: none reported yet).
	Progress *domain.Progress
}

// Waiting is a mission that waits, with the reasons get_mission's why_not_running gives.
type Waiting struct {
	ID, Key, Title, VoyageID string
	State                    domain.MissionState
	Why                      []engine.Reason
}

// Bounds of a snapshot, so that one read stays cheap on a large data dir.
const (
	MaxVoyages         = 10
	MaxFinishedVoyages = 3
	MaxWaiting         = 50
	MaxEscalations     = 50
)

// unfinished and finished voyage states.
var (
	unfinishedVoyages = []domain.VoyageState{domain.VoyageOpen, domain.VoyageActive, domain.VoyageBlocked}
	finishedVoyages   = []domain.VoyageState{domain.VoyageCompleted, domain.VoyageCancelled}
)

// Load reads a Snapshot. Errors are the engine's (a closed store, a cancelled ctx).
func Load(ctx context.Context, e *engine.Engine) (Snapshot, error) {
	st, err := tools.ReadStatus(ctx, e)
	if err != nil {
		return Snapshot{}, err
	}
	s := Snapshot{At: e.Now(), Status: st}
	if s.Voyages, err = loadVoyages(ctx, e); err != nil {
		return s, err
	}
	if s.Running, err = loadRunning(ctx, e); err != nil {
		return s, err
	}
	if s.Waiting, s.MoreWaiting, err = loadWaiting(ctx, e, s.Voyages); err != nil {
		return s, err
	}
	s.Escalations, err = e.Escalations(ctx, engine.EscalationFilter{State: domain.EscalationOpen, Limit: MaxEscalations})
	return s, err
}

func loadVoyages(ctx context.Context, e *engine.Engine) ([]Voyage, error) {
	open, err := e.Voyages(ctx, unfinishedVoyages, MaxVoyages)
	if err != nil {
		return nil, err
	}
	done, err := e.Voyages(ctx, finishedVoyages, MaxFinishedVoyages)
	if err != nil {
		return nil, err
	}
	var out []Voyage
	for _, v := range append(open, done...) {
		d, err := e.VoyageStatus(ctx, v.ID)
		if err != nil {
			return nil, err
		}
		out = append(out, Voyage{ID: v.ID, Title: d.Voyage.Title, State: d.Voyage.State, Counts: d.Counts, Missions: d.Missions})
	}
	return out, nil
}

func loadRunning(ctx context.Context, e *engine.Engine) ([]Running, error) {
	ms, err := e.Leased(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]Running, 0, len(ms))
	for _, m := range ms {
		out = append(out, Running{ID: m.ID, Key: m.Key, Title: m.Title, VoyageID: m.VoyageID, State: m.State,
			Attempt: m.Attempt, Agent: m.Lease.Owner, Progress: m.Progress})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// loadWaiting takes the waiting missions of the voyages already read (their reasons come
// with voyage_status) and the pending or interrupted missions outside them (explained one by
// one, as get_mission does), up to MaxWaiting; it returns how many more there were.
func loadWaiting(ctx context.Context, e *engine.Engine, voyages []Voyage) ([]Waiting, int, error) {
	var out []Waiting
	more := 0
	add := func(w Waiting) {
		if len(out) < MaxWaiting {
			out = append(out, w)
		} else {
			more++
		}
	}
	seen := map[string]bool{}
	for _, v := range voyages {
		for _, m := range v.Missions {
			seen[m.ID] = true
			if waits(m.State, m.Landing) {
				add(Waiting{ID: m.ID, Key: m.Key, Title: m.Title, VoyageID: v.ID, State: m.State, Why: m.Why})
			}
		}
	}
	ms, err := e.ListMissions(ctx, engine.MissionFilter{States: []domain.MissionState{domain.StatePending, domain.StateInterrupted}, Limit: MaxWaiting + 1})
	if err != nil {
		return nil, 0, err
	}
	for _, m := range ms {
		if seen[m.ID] {
			continue
		}
		if len(out) >= MaxWaiting {
			more++
			continue
		}
		d, err := e.GetMission(ctx, m.ID)
		if err != nil {
			return nil, 0, err
		}
		add(Waiting{ID: m.ID, Key: m.Key, Title: m.Title, VoyageID: m.VoyageID, State: m.State, Why: d.WhyNotRunning})
	}
	return out, more, nil
}

// waits reports whether a mission in this state and landing is one that waits (could run
// but does not, or finished work whose landing has not happened).
func waits(s domain.MissionState, l domain.LandingState) bool {
	return s.Runnable() || (s == domain.StateCompleted && !l.Satisfies())
}

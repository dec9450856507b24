package dashboard

import "github.com/mcp-scheduler/mcp-scheduler/engine/domain"

// Badge is one count the dashboard shows of missions: the header counts every mission, a
// voyage's page the voyage's, both through badges, so the two read the same way and add up.
type Badge struct {
	// Key names the group: running, waiting, blocked, completed, failed, cancelled.
	Key string `json:"key"`
	// Count is the number of missions in the group's States.
	Count  int                   `json:"count"`
	States []domain.MissionState `json:"states"`
}

// badgeGroups are the groups, in the order they are shown, and the states each counts:
// every mission state is in exactly one (badges_test.go checks it).
var badgeGroups = []struct {
	key    string
	states []domain.MissionState
}{
	{"running", []domain.MissionState{domain.StateLeased, domain.StateRunning}},
	{"waiting", []domain.MissionState{domain.StatePending, domain.StateInterrupted}},
	{"blocked", []domain.MissionState{domain.StateBlocked}},
	{"completed", []domain.MissionState{domain.StateCompleted}},
	{"failed", []domain.MissionState{domain.StateFailed}},
	{"cancelled", []domain.MissionState{domain.StateCancelled}},
}

// badges counts missions by group from counts per state (the status tool's counts, or a
// voyage's); groups with none are left out.
func badges(counts map[domain.MissionState]int) []Badge {
	out := []Badge{}
	for _, g := range badgeGroups {
		b := Badge{Key: g.key, States: g.states}
		for _, s := range g.states {
			b.Count += counts[s]
		}
		if b.Count > 0 {
			out = append(out, b)
		}
	}
	return out
}

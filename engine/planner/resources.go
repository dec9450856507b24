package planner

import (
	"fmt"
	"math"
)

// Reading is one resource threshold against its current reading, as the resource gate saw it
// (doctor prints the same readings).
type Reading struct {
	// Name is load_per_cpu, available_memory_mb or free_disk_mb.
	Name string `json:"name"`
	// Value is the reading. For load_per_cpu it is the 1-minute load average less one unit
	// per agent of ours that runs, divided by the CPU count (see ResourceCap).
	Value float64 `json:"value"`
	// Raw is the reading before our own agents are subtracted (load_per_cpu only).
	Raw float64 `json:"raw,omitempty"`
	// Threshold is the configured limit (0: the gate is off).
	Threshold float64 `json:"threshold"`
	// Short is true when the reading is past its threshold.
	Short bool `json:"short"`
	// Err is why the reading could not be taken ("" when it was).
	Err string `json:"error,omitempty"`
}

// ResourceCap is the resource gate: how many of our managed agents may run at once given the
// readings (limit: the configured concurrency), and why fewer (ok: no threshold is passed).
//
// The rule (docs/configuration.md, "Resources"): the gate reduces concurrency and never stops
// dispatch. Each agent of ours that runs counts as one unit of load and is subtracted before the
// comparison, so load our own agents cause does not by itself hold new work back. Past
// max_load_per_cpu, the cap shrinks in proportion — limit × threshold / reading, rounded down —
// and never below 1: while none of our agents runs, one may always start, so progress is
// guaranteed on any machine. Short memory or disk caps it at 1 (one agent at a time).
func ResourceCap(readings []Reading, limit int) (cap int, why string, ok bool) {
	cap = limit
	for _, r := range readings {
		if !r.Short {
			continue
		}
		c, w := 1, ""
		switch r.Name {
		case "load_per_cpu":
			c = int(math.Floor(float64(limit) * r.Threshold / r.Value))
			w = fmt.Sprintf("the machine is busy (load per CPU above max_load_per_cpu %.2f, not counting our own agents)", r.Threshold)
		case "available_memory_mb":
			w = fmt.Sprintf("available memory is below min_free_memory_mb %.0f MB", r.Threshold)
		case "free_disk_mb":
			w = fmt.Sprintf("free disk on the data dir is below min_free_disk_mb %.0f MB", r.Threshold)
		}
		c = max(c, 1)
		if c < cap || why == "" {
			cap, why = min(cap, c), w
		}
	}
	return cap, why, why == ""
}

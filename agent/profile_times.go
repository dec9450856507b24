package agent

import "fmt"

// DefaultStallTimeoutFactor: a profile without stall_timeout stops a silent agent after this
// many stall thresholds (20m with the defaults).
const DefaultStallTimeoutFactor = 2

// checkTimes reports the first duration of p that cannot work, naming its key: none may be
// negative, and a stall_timeout below stall_threshold would stop an agent before it was ever
// marked stalled and pinged.
func (p Profile) checkTimes() error {
	for _, d := range []struct {
		key string
		v   Duration
	}{{"soft_timeout", p.SoftTimeout}, {"hard_timeout", p.HardTimeout}, {"grace", p.Grace},
		{"stall_threshold", p.StallThreshold}, {"stall_timeout", p.StallTimeout}} {
		if d.v < 0 {
			return fmt.Errorf("profile %s: %s %s must not be negative", p.Name, d.key, d.v.D())
		}
	}
	if p.StallThreshold > 0 && p.StallTimeout > 0 && p.StallTimeout < p.StallThreshold {
		return fmt.Errorf("profile %s: stall_timeout %s is shorter than stall_threshold %s: make it at least as long "+
			"(the agent is pinged at the threshold and stopped at the timeout)", p.Name, p.StallTimeout.D(), p.StallThreshold.D())
	}
	return nil
}

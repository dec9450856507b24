package scheduler

import "time"

// Metrics is what the loop reports as it works, for a metrics endpoint (tools/metrics
// implements it with Prometheus; the scheduler imports no metrics library). Each call is made
// where the thing happens, on the goroutine that did it, so an implementation must be safe
// for concurrent use and quick. Config.Metrics nil reports nothing.
type Metrics interface {
	// TickObserved is called after each tick this process ran as the leader (recovery,
	// supervision, planning, dispatch and settlement), with its wall-clock duration.
	TickObserved(d time.Duration)
	// LandingObserved is called once per landing the lander ran on git (a merge with the
	// target branch, checks included), with its result (worktree.LandStatus: landed,
	// already_landed, nothing_to_land, waiting, conflicted, checks_failed) and its
	// duration (a batch's duration shared evenly among its missions, as in the landing record).
	LandingObserved(result string, d time.Duration)
	// AgentProcess is called when this process starts supervising a managed agent (a launch
	// or a re-attach; running true) and when it stops (the agent ended or was detached;
	// running false), with the profile that runs it.
	AgentProcess(profile string, running bool)
}

// noMetrics reports nothing (Config.Metrics nil).
type noMetrics struct{}

func (noMetrics) TickObserved(time.Duration)            {}
func (noMetrics) LandingObserved(string, time.Duration) {}
func (noMetrics) AgentProcess(string, bool)             {}

// runProfile is the profile an attempt run is counted under: the one recorded on the mission,
// else the profile it was launched with.
func runProfile(a *attemptRun) string {
	if a.mission.Profile != "" {
		return a.mission.Profile
	}
	return a.profile.Name
}

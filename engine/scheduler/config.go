package scheduler

import (
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"time"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
	"github.com/mcp-scheduler/mcp-scheduler/engine"
)

// Landing policies per repository (design brief §6).
const (
	LandingAuto     = "auto"     // land as soon as review and checks pass
	LandingApproval = "approval" // wait for approve_landing
	LandingNone     = "none"     // leave the branch for a person
)

// Conflict policies per repository.
const (
	OnConflictRepair = "repair" // a repair mission merges the target in and resolves the conflict
	OnConflictBlock  = "block"  // block with an escalation naming the paths
)

// RepoPolicy is the configuration of one repository.
type RepoPolicy struct {
	// Path is the repository's top level (absolute).
	Path string
	// TargetBranch is where work lands (default: the branch checked out when opened).
	TargetBranch string
	// Landing is auto, approval or none.
	Landing string
	// OnConflict is repair or block.
	OnConflict string
	// Checks are commands (argv lists, never a shell) run on the merged tree before landing.
	Checks [][]string
	// CheckTimeout bounds each check command (default 10m).
	CheckTimeout time.Duration
}

// Resources are the thresholds that pause new dispatch (running work is never killed for
// them). Zero disables a threshold.
type Resources struct {
	MaxLoadPerCPU float64 // 1-minute load average divided by the CPU count
	MinFreeMemMB  uint64  // available memory
	MinFreeDiskMB uint64  // free space on the data dir's file system
}

// Config configures a Scheduler. Zero values take the design brief §10 defaults.
type Config struct {
	// DataDir holds attempt directories (the runner's) and worktrees (the manager's).
	DataDir string
	// Owner identifies this process for the leader lease (default host:pid:random).
	Owner string
	// Node names this scheduler node in cluster mode (several scheduler processes sharing one
	// PostgreSQL store, each with its own data dir and agents; node.go). "" is a single node:
	// the leader does everything, as on SQLite. In cluster mode every node runs its own agents
	// up to its own limits (MaxConcurrency, the profiles' limits, Resources) under its node
	// lease, and the leader adds the cluster-wide duties (reaping, deadlines, holds, landing,
	// voyage settlement, cleanup).
	Node string
	// Tick is the loop period (default 1s).
	Tick time.Duration
	// LeaderLease is the leader lease TTL (default 5s); it is renewed every LeaderLease/5.
	LeaderLease time.Duration
	// LandingLockTTL is how long a node's landing lock on a target runs unless renewed
	// (cluster mode; default DefaultLandingLockTTL): the worker holding it renews it every
	// third of that while it lands, so the lock of a node that died is taken over at most
	// this long after.
	LandingLockTTL time.Duration
	// RenewEvery is how often the lease of a live managed agent is renewed (default 20s).
	RenewEvery time.Duration
	// MaxConcurrency caps managed attempts in flight (default: the number of CPUs).
	MaxConcurrency int
	// PerRepository caps attempts in flight per repository (default 4).
	PerRepository int
	// UrgentPriority: a runnable mission at or under it that waits only for a slot preempts
	// the lowest-priority running one (default 10).
	UrgentPriority int
	// WaveSize is how many runnable missions one planning step looks at (default 200).
	WaveSize int
	// Profiles are the managed agent profiles.
	Profiles []agent.Profile
	// Repositories are the configured repositories with their policies; a repository
	// without an entry uses the defaults (auto landing, repair on conflict, no checks).
	Repositories []RepoPolicy
	// Resources pause new dispatch when low.
	Resources Resources
	// StopAgentsOnShutdown stops managed agents when the scheduler stops; by default they
	// keep working (their output goes to files) and the next leader collects them.
	StopAgentsOnShutdown bool
	// CleanupEvery is how often the leader removes workspaces whose missions need them no
	// more (Cleanup; default 1h, negative: never).
	CleanupEvery time.Duration
	// Retention is how long finished history is kept (PruneHistory; default DefaultRetention,
	// 30 days; negative: kept for ever). The leader prunes it with its periodic cleanup.
	Retention time.Duration
	// RetentionBatch is how many missions one prune transaction looks at (default
	// engine.DefaultPruneBatch); RetentionPause the pause between two (default
	// engine.DefaultPrunePause).
	RetentionBatch int
	RetentionPause time.Duration
	// ExternalAgentTTL: an external (pull-mode) agent seen within it counts as able to take
	// missions of its capabilities and personas (default 10m).
	ExternalAgentTTL time.Duration
	// UnclaimedGrace is how long a mission that no profile can take waits for an agent to
	// claim it before it is escalated as no_agent (default 10m).
	UnclaimedGrace time.Duration
	// RateLimit is how a reported rate-limit window pauses its limit group (reset + margin,
	// backoff when the reset is unknown; engine.RatePolicy's defaults for zero fields).
	RateLimit engine.RatePolicy
	Logger    *slog.Logger
	// Metrics is told of ticks, landings and agent processes as they happen (metrics.go);
	// nil reports nothing.
	Metrics Metrics
	// Now is the clock (default time.Now); engine time comes from the engine's clock.
	Now func() time.Time
	// Prices turn reported token counts into dollars where the agent reports none
	// (configuration [[prices]]; budget.go).
	Prices engine.Prices
}

func (c Config) withDefaults() Config {
	if c.Owner == "" {
		host, _ := os.Hostname() // without a host name the pid and the clock still make the owner unique
		c.Owner = fmt.Sprintf("%s:%d:%d", host, os.Getpid(), time.Now().UnixNano()%1_000_000)
	}
	if c.Tick == 0 {
		c.Tick = time.Second
	}
	if c.LeaderLease == 0 {
		c.LeaderLease = 5 * time.Second
	}
	if c.LandingLockTTL == 0 {
		c.LandingLockTTL = DefaultLandingLockTTL
	}
	if c.RenewEvery == 0 {
		c.RenewEvery = 20 * time.Second
	}
	if c.MaxConcurrency == 0 {
		c.MaxConcurrency = runtime.NumCPU()
	}
	if c.PerRepository == 0 {
		c.PerRepository = 4
	}
	if c.UrgentPriority == 0 {
		c.UrgentPriority = 10
	}
	if c.WaveSize == 0 {
		c.WaveSize = 200
	}
	if c.CleanupEvery == 0 {
		c.CleanupEvery = time.Hour
	}
	if c.UnclaimedGrace <= 0 {
		c.UnclaimedGrace = 10 * time.Minute
	}
	if c.Retention == 0 {
		c.Retention = DefaultRetention
	}
	if c.ExternalAgentTTL == 0 {
		c.ExternalAgentTTL = 10 * time.Minute
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Metrics == nil {
		c.Metrics = noMetrics{}
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	for i := range c.Profiles {
		c.Profiles[i] = c.Profiles[i].WithDefaults()
	}
	return c
}

// policy returns the configured policy of a repository (defaults when none).
func (c Config) policy(repo string) RepoPolicy {
	for _, p := range c.Repositories {
		if p.Path == repo {
			return p.withDefaults()
		}
	}
	return RepoPolicy{Path: repo}.withDefaults()
}

func (p RepoPolicy) withDefaults() RepoPolicy {
	if p.Landing == "" {
		p.Landing = LandingAuto
	}
	if p.OnConflict == "" {
		p.OnConflict = OnConflictRepair
	}
	if p.CheckTimeout == 0 {
		p.CheckTimeout = 10 * time.Minute
	}
	return p
}

func (c Config) profile(name string) (agent.Profile, bool) {
	for _, p := range c.Profiles {
		if p.Name == name {
			return p, true
		}
	}
	return agent.Profile{}, false
}

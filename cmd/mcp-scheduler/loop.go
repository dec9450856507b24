package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
	"github.com/mcp-scheduler/mcp-scheduler/agent/runner"
	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/engine/scheduler"
	"github.com/mcp-scheduler/mcp-scheduler/tools"
	"github.com/mcp-scheduler/mcp-scheduler/worktree"
)

// loop is the scheduler loop with its workspace manager and agent runner, over the open
// engine. Every process that opens the data dir may build one; only the leader dispatches.
type loop struct {
	wt  *worktree.Manager
	run *runner.Runner
	s   *scheduler.Scheduler
}

// openLoop builds the loop's parts from the configuration (the engine must be open).
func (a *app) openLoop(ctx context.Context) (*loop, error) {
	if a.loop != nil {
		return a.loop, nil
	}
	self, err := selfPath()
	if err != nil {
		return nil, err
	}
	var copyIgnored []string
	pool := 0
	for _, r := range a.cfg.Repositories {
		copyIgnored = append(copyIgnored, r.CopyIgnored...)
		pool = max(pool, r.WarmPool)
	}
	slices.Sort(copyIgnored)
	l := &loop{}
	l.wt, err = worktree.NewManager(worktree.Config{DataDir: a.cfg.DataDir,
		Author:      worktree.Signature{Name: a.cfg.Git.AuthorName, Email: a.cfg.Git.AuthorEmail},
		CopyIgnored: slices.Compact(copyIgnored), WarmPool: pool, Remotes: a.cfg.remotes(), Logger: a.log.With("component", "worktree")})
	if err != nil {
		return nil, err
	}
	l.run, err = runner.New(runner.Config{Self: self, DataDir: a.cfg.DataDir, Logger: a.log}) // the runner adds component=runner itself
	if err != nil {
		_ = l.wt.Close()
		return nil, err
	}
	l.s, err = scheduler.New(a.eng, l.wt, l.run, a.schedulerConfig(ctx))
	if err != nil {
		_ = l.run.Close()
		_ = l.wt.Close()
		return nil, err
	}
	a.loop = l
	return l, nil
}

// recordProfiles lists the configured managed profiles among the agents the scheduler knows
// (list_agents, status): external agents are recorded when they claim, profiles here, at the
// start of every process that runs the loop.
func (a *app) recordProfiles(ctx context.Context) {
	for _, p := range a.cfg.Profiles {
		if err := a.eng.TouchAgent(ctx, domain.Agent{ID: p.Name, Kind: "managed", Profile: p.Name,
			Capabilities: p.Capabilities, Personas: p.Personas}); err != nil {
			a.log.Warn("managed profile not recorded", "profile", p.Name, "err", err)
		}
		// The check doctor makes, said at start: a profile whose program is missing would
		// block every mission it takes (each with an environment escalation).
		if _, err := a.findProgram(p.WithDefaults().Command[0]); err != nil {
			a.log.Warn("agent program not found: missions this profile takes will block with an escalation until it is installed",
				"profile", p.Name, "err", err, "check", "mcp-scheduler doctor")
		}
	}
}

// schedulerConfig maps the configuration onto the loop's.
func (a *app) schedulerConfig(ctx context.Context) scheduler.Config {
	s := a.cfg.Scheduler
	c := scheduler.Config{DataDir: a.cfg.DataDir, Node: a.cfg.nodeName(), Tick: s.Tick.D(), LeaderLease: s.LeaderLease.D(),
		LandingLockTTL: s.LandingLockTTL.D(),
		RenewEvery:     s.RenewInterval.D(), MaxConcurrency: s.MaxConcurrency, PerRepository: s.PerRepository,
		UrgentPriority: s.UrgentPriority, UnclaimedGrace: s.UnclaimedGrace.D(), Logger: a.log.With("component", "scheduler"),
		RateLimit: engine.RatePolicy{Margin: s.RateLimitMargin.D()},
		Retention: retentionAge(a.cfg.Retention.MaxAge.D()), RetentionBatch: a.cfg.Retention.Batch,
		RetentionPause: a.cfg.Retention.BatchPause.D(), Prices: a.cfg.Prices, Metrics: a.collector(),
		Resources: scheduler.Resources{MaxLoadPerCPU: a.cfg.Resources.MaxLoadPerCPU,
			MinFreeMemMB: uint64(max(a.cfg.Resources.MinFreeMemoryMB, 0)), MinFreeDiskMB: uint64(max(a.cfg.Resources.MinFreeDiskMB, 0))}}
	for _, p := range a.cfg.Profiles {
		if p.StallThreshold == 0 {
			p.StallThreshold = s.StallThreshold
		}
		if p.Grace == 0 {
			p.Grace = s.Grace
		}
		c.Profiles = append(c.Profiles, p)
	}
	for _, r := range a.cfg.Repositories {
		top := r.remoteName() // missions name a remote repository by its name
		if r.Remote == "" {
			var err error
			if top, err = gitTopLevel(ctx, r.Path); err != nil {
				continue // newRepositories refused such a configuration already
			}
		}
		c.Repositories = append(c.Repositories, scheduler.RepoPolicy{Path: top, TargetBranch: r.TargetBranch,
			Landing: r.Landing, OnConflict: r.OnConflict, Checks: r.Checks})
	}
	return c
}

// retentionAge maps [retention] max_age onto the loop's Retention: 0 (keep everything) is
// negative there, where 0 means the default.
func retentionAge(d time.Duration) time.Duration {
	if d == 0 {
		return -1
	}
	return d
}

// debugAvailable tells the engine's failure policy whether a debugger mission can run.
func debugAvailable(profiles []agent.Profile) func() bool {
	ok := false
	for _, p := range profiles {
		if len(p.Personas) == 0 || slices.Contains(p.Personas, "debugger") {
			ok = true
		}
	}
	return func() bool { return ok }
}

func (l *loop) close(ctx context.Context) error {
	return errors.Join(l.s.Stop(ctx), l.run.Close(), l.wt.Close())
}

// selfPath is our own binary, symlinks resolved: managed agents are started through it
// (`mcp-scheduler agent-shim`), and the reference agent is `mcp-scheduler reference-agent`.
func selfPath() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("find our own binary: %w", err)
	}
	if exe, err = filepath.EvalSymlinks(exe); err != nil {
		return "", fmt.Errorf("find our own binary: %w", err)
	}
	return exe, nil
}

// workspaceService serves get_mission_diff from the loop.
type workspaceService struct{ s *scheduler.Scheduler }

func (w workspaceService) Diff(ctx context.Context, m domain.Mission) (tools.Diff, error) {
	d, err := w.s.Diff(ctx, &m)
	if errors.Is(err, domain.ErrNotFound) {
		return tools.Diff{}, tools.ErrNoWorkspace
	}
	if err != nil {
		return tools.Diff{}, err
	}
	ws, err := w.s.Workspace(ctx, &m)
	if err != nil {
		return tools.Diff{}, err
	}
	out := tools.Diff{Base: d.From, Head: d.To, Branch: ws.Branch, Patch: d.Patch, Truncated: d.Truncated}
	for _, f := range d.Files {
		out.Files = append(out.Files, tools.DiffFile{Path: f.Path, OldPath: f.OldPath, Action: string(f.Action)})
	}
	return out, nil
}

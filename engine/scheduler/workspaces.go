package scheduler

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/mcp-scheduler/mcp-scheduler/agent/runner"
	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/worktree"
)

// workspaces is the workspace keeper: it prepares an attempt's workspace (prepare, with the
// start point of review, verify and repair missions), verifies that finished work still
// exists (verify), and keeps the data dir from growing for ever — the leader's scheduled
// pass (RunOnce: the history retention, then the workspace cleanup of every repository)
// every CleanupEvery, started by the tick (kick) in a goroutine of its own that Stop cancels
// and waits for. Cleanup and PruneHistory are the same parts on demand (tools, cmd).
type workspaces struct {
	eng *engine.Engine
	wt  *worktree.Manager
	run *runner.Runner
	cfg Config
	log *slog.Logger
	// leads reports whether this process holds the leader lease: the history retention is a
	// cluster-wide duty, run by the leader only (the workspace cleanup, of this node's data
	// dir, runs on every node). Nil: always (tests driving the keeper alone).
	leads func() bool

	// stop is cancelled by Stop: the scheduled pass runs under it, not under a tick's
	// context (a tick ends long before a cleanup of many repositories).
	stop     context.Context
	stopPass context.CancelFunc

	mu          sync.Mutex
	lastCleanup time.Time // when the last scheduled pass started
	cleaning    bool      // a scheduled pass runs
	passes      sync.WaitGroup
}

// ScheduledCleanup is what one scheduled pass of the workspace keeper did.
type ScheduledCleanup struct {
	History HistoryReport   // the history retention (zero when Retention < 0)
	Repos   []CleanupReport // the workspace cleanup, per repository
	Removed int             // workspaces removed in all
	// Unpublished counts the leftover attempt branches deleted from remote repositories
	// (the leader's pass only: sweepPublished).
	Unpublished int
}

func newWorkspaces(eng *engine.Engine, wt *worktree.Manager, run *runner.Runner, cfg Config) *workspaces {
	ws := &workspaces{eng: eng, wt: wt, run: run, cfg: cfg, log: cfg.Logger}
	ws.stop, ws.stopPass = context.WithCancel(context.Background())
	return ws
}

// RunOnce is one scheduled pass, now: the history retention (unless Retention < 0), then
// the cleanup of every repository with workspaces under the data dir, then (the leader) the
// sweep of leftover attempt branches on remote repositories. The pass's errors are
// logged (a cleanup that failed in one repository goes on in the others) and the cleanup's
// returned.
func (ws *workspaces) RunOnce(ctx context.Context) (ScheduledCleanup, error) {
	var out ScheduledCleanup
	out.History = ws.scheduledPrune(ctx)
	reps, err := ws.Cleanup(ctx, "", 0, false)
	out.Repos = reps
	for _, r := range reps {
		out.Removed += len(r.Report.Removed)
	}
	if err != nil && ctx.Err() == nil {
		ws.log.Warn("scheduled cleanup", "err", err)
	}
	if out.Removed > 0 {
		ws.log.Info("scheduled cleanup removed workspaces", "removed", out.Removed)
	}
	out.Unpublished = ws.sweepPublished(ctx)
	return out, err
}

// kick starts a scheduled pass in the background when CleanupEvery passed since the last one
// began and none runs (CleanupEvery < 0: never). After Stop it starts none.
func (ws *workspaces) kick() {
	if ws.cfg.CleanupEvery < 0 {
		return
	}
	now := ws.cfg.Now()
	ws.mu.Lock()
	due := now.Sub(ws.lastCleanup) >= ws.cfg.CleanupEvery && !ws.cleaning && ws.stop.Err() == nil
	if due {
		ws.lastCleanup, ws.cleaning = now, true
		ws.passes.Add(1)
	}
	ws.mu.Unlock()
	if !due {
		return
	}
	go func() {
		defer ws.passes.Done()
		ws.pass()
	}()
}

// pass is the scheduled pass kick started, under the keeper's stop context.
func (ws *workspaces) pass() {
	defer func() { ws.mu.Lock(); ws.cleaning = false; ws.mu.Unlock() }()
	_, _ = ws.RunOnce(ws.stop) // RunOnce logged what failed; the next pass tries again
}

// Stop interrupts the scheduled pass in flight (the next leader's pass does what it left)
// and returns when its goroutine has returned. Stop before any pass, or twice, is fine.
func (ws *workspaces) Stop() {
	ws.mu.Lock()
	ws.stopPass() // under mu: a kick either sees it or has Added before the Wait below
	ws.mu.Unlock()
	ws.passes.Wait()
}

// Package scheduler is the loop that turns the engine, the workspaces and the agent runner
// into a scheduler that runs voyages to their end by itself (design brief §5).
//
// One tick (RunOnce):
//
//  1. leadership (leader.go): exactly one process per data dir runs the loop, holding a leader
//     lease with an epoch in the database; the others serve MCP requests and take over when it
//     expires;
//  2. recovery (recover.go, on becoming leader): agents launched by an earlier leader are re-attached when
//     still running, their results collected when they ended unwatched, and reported lost
//     when they are gone;
//  3. leases: expired ones are reaped and missed deadlines raise escalations (recover.go); the
//     supervisor (supervisor.go) renews the leases of agents known to be alive and stops those
//     whose mission is no longer theirs;
//  4. planning: a wave over the runnable missions in pick order, each held-back mission with
//     its reason (dependency, conflict, backoff, no agent profile, concurrency limit, low
//     resources, requirements changed, cost budget), recorded when it changed; the same plan
//     says which landings move, per target branch, and why the others wait (planner.Landings,
//     the waits recorded with the holds);
//  5. dispatch: the assignment score picks a profile; the workspace is created, the brief
//     written, the agent launched through the runner and supervised until it ends;
//  6. landing: the landing service (lander.go) applies the plan's landing moves (plan.go:
//     apply → lander.apply): it reviews completed missions when their policy says so, checks
//     them, and lands them one target branch at a time; conflicts, failed checks and review findings become repair missions (or
//     block, by policy). It owns the landing state machine (docs/state-machine.md) and
//     raises its escalations once (engine.EscalateOnce);
//  7. settling: voyages complete, block with a report, or go on;
//  8. the workspace keeper (workspaces.go) starts its scheduled pass when due: history
//     retention, then workspace cleanup.
//
// Each of these duties is a service of its own with its own state and lock; Scheduler composes
// them (docs/architecture.md, "The scheduler's services").
//
// The loop ticks on a timer (default 1 s) and at once when the engine publishes a change
// that can unblock work (an in-process signal, no polling).
package scheduler

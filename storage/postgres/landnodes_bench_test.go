package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/storage/postgres/pgtest"
	"github.com/mcp-scheduler/mcp-scheduler/worktree"
)

// BenchmarkRemoteLandingNodesLock is the landing throughput of three scheduler nodes onto one
// target of one remote against one node, without and with the database landing lock (issue
// 14, "Measured"; docs/benchmarks.md, "Landing throughput"). The nodes and the work are
// worktree's BenchmarkRemoteLandingNodes: each node a worktree.Manager on its own data dir and
// clone, the remote a bare repository over smart HTTP on 127.0.0.1, landingsPerRound landings
// a round (each its own file) split evenly among the nodes landing at once, a landing that
// lost every compare-and-set round (ErrTargetMoving) landed again; workspaces are made before
// the timer runs. Each iteration runs one round on one node and one on three (each set with
// its own remote, in alternating order), so that the ratio compares rounds run under the same
// load: a machine whose load changes during the run moves both.
//
// lock=with gives every node its own Engine on one PostgreSQL database per set
// (pgtest.Database) and lands the way the cluster lander does (engine/scheduler/landlock.go):
// before each landing the node reads the live landing locks and takes the target's
// (LandingLockTake) when no other node holds it, else waits for the next change committed on
// any node (its LISTEN/NOTIFY listener, WatchExternal), as its next plan would; it releases
// the lock after (LandingLockRelease). lock=without lands as worktree's benchmark does.
//
// Reported: n1_landings/s, one node's rate; for three nodes (n3_), landings/s;
// relands/landing, the landings redone after ErrTargetMoving; lostpush/landing, the pushes
// that lost to another node inside Land (each redid the fetch and merge); waits/landing, the
// landings that found the lock held by another node; wait-ms/landing, the time spent waiting
// for it, over all landings. Then x_3to1, three nodes' landings/s over one's, and load1 at the
// end. No speed is asserted;
// every landing is checked to be on its remote exactly once.
//
//	go run ./storage/postgres/pgtest/pgrun -- go test -run '^$' -bench RemoteLandingNodesLock -benchtime 3x ./storage/postgres/
func BenchmarkRemoteLandingNodesLock(b *testing.B) {
	for _, withLock := range []bool{false, true} {
		name := "lock=without"
		if withLock {
			name = "lock=with"
		}
		b.Run(name, func(b *testing.B) { benchRemoteLandings(b, withLock) })
	}
}

// landingsPerRound is how many landings one round makes, split among the nodes.
const landingsPerRound = 12

// benchTarget is the landing lock's name of the remote's main (engine.LandingTarget).
var benchTarget = engine.LandingTarget("shop", "main")

// landCounts are the counters the nodes of one set add to, and the set's time landing.
type landCounts struct {
	landed, relands, lostPush, waited, waitNanos atomic.Int64
	elapsed                                      time.Duration
}

// landSet is one set of nodes landing onto its own remote.
type landSet struct {
	rem   httpRemote
	nodes []landNode
	c     *landCounts
}

// benchRemoteLandings runs b.N iterations, each a round on one node and one on three, and
// reports the metrics.
func benchRemoteLandings(b *testing.B, withLock bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	sets := make([]landSet, 2)
	for i, n := range []int{1, 3} {
		sets[i].rem, sets[i].c = newHTTPRemote(b), &landCounts{}
		sets[i].nodes = openLandNodes(ctx, b, sets[i].rem, n, withLock, sets[i].c)
	}
	b.StopTimer()
	for round := range b.N {
		for j := range sets {
			s := sets[(round+j)%2]
			wss := prepareRound(ctx, b, s.nodes, round)
			b.StartTimer()
			start := time.Now()
			require.NoError(b, landRound(ctx, s.nodes, wss, s.c))
			s.c.elapsed += time.Since(start)
			b.StopTimer()
		}
	}
	for _, s := range sets {
		for round := range b.N {
			for k := range landingsPerRound {
				require.Equal(b, 1, s.rem.landedOnce(b, roundMission(round, k)), "landings of %s on the remote", roundMission(round, k))
			}
		}
	}
	one := float64(sets[0].c.landed.Load()) / sets[0].c.elapsed.Seconds()
	b.ReportMetric(one, "n1_landings/s")
	b.ReportMetric(reportSet(b, "n3_", sets[1].c)/one, "x_3to1")
	b.ReportMetric(loadAvg(), "load1")
}

// reportSet reports a set's metrics under prefix and returns its landings/s (one node's
// other figures are zero by construction: nothing else lands onto its remote).
func reportSet(b *testing.B, prefix string, c *landCounts) float64 {
	landed := float64(c.landed.Load())
	rate := landed / c.elapsed.Seconds()
	b.ReportMetric(rate, prefix+"landings/s")
	b.ReportMetric(float64(c.relands.Load())/landed, prefix+"relands/landing")
	b.ReportMetric(float64(c.lostPush.Load())/landed, prefix+"lostpush/landing")
	b.ReportMetric(float64(c.waited.Load())/landed, prefix+"waits/landing")
	b.ReportMetric(float64(c.waitNanos.Load())/1e6/landed, prefix+"wait-ms/landing")
	return rate
}

func roundMission(round, k int) string { return fmt.Sprintf("r%dm%d", round, k) }

// landNode is one node: its worktree Manager and clone, and its landing lock (nil without).
type landNode struct {
	m    *worktree.Manager
	repo *worktree.Repo
	lock *targetLock
}

// openLandNodes opens n nodes on rem; withLock gives each an Engine on one fresh database
// (the set's), watching the others' commits until ctx ends.
func openLandNodes(ctx context.Context, b *testing.B, rem httpRemote, n int, withLock bool, c *landCounts) []landNode {
	b.Helper()
	ns := make([]landNode, n)
	for i := range ns {
		ns[i].m, ns[i].repo = remoteNode(b, rem, &c.lostPush)
	}
	if !withLock {
		return ns
	}
	for i, bn := range openBenchNodes(b, pgtest.Database(b), n, nil) {
		wctx, stop := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { defer close(done); _ = bn.e.WatchExternal(wctx, 0) }()
		sub := bn.e.Hub().Subscribe()
		b.Cleanup(func() { sub.Close(); stop(); <-done }) // before the store closes
		ns[i].lock = &targetLock{e: bn.e, node: fmt.Sprintf("n%d", i+1), sub: sub}
	}
	return ns
}

// prepareRound makes round's workspaces, each writing its own file, dealt out to the nodes.
func prepareRound(ctx context.Context, b *testing.B, ns []landNode, round int) [][]worktree.Workspace {
	b.Helper()
	wss := make([][]worktree.Workspace, len(ns))
	for k := range landingsPerRound {
		n := k % len(ns)
		id := roundMission(round, k)
		ws, err := ns[n].m.Prepare(ctx, worktree.PrepareRequest{Repo: ns[n].repo, MissionID: id, Attempt: 1})
		require.NoError(b, err)
		require.NoError(b, writeWorkspaceFile(ws.Path, id+".txt", id+"\n"))
		wss[n] = append(wss[n], ws)
	}
	return wss
}

// landRound lands every node's workspaces, the nodes at once; it returns their errors.
func landRound(ctx context.Context, ns []landNode, wss [][]worktree.Workspace, c *landCounts) error {
	var wg sync.WaitGroup
	errs := make([]error, len(ns))
	for n := range ns {
		wg.Go(func() { errs[n] = ns[n].landAll(ctx, wss[n], c) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// landAll lands wss one after the other, each again after ErrTargetMoving.
func (n landNode) landAll(ctx context.Context, wss []worktree.Workspace, c *landCounts) error {
	for _, ws := range wss {
		for {
			again, err := n.landOne(ctx, ws, c)
			if err != nil {
				return fmt.Errorf("land %s: %w", ws.MissionID, err)
			}
			if !again {
				break
			}
			c.relands.Add(1)
		}
		c.landed.Add(1)
	}
	return nil
}

// landOne lands ws once, holding the target's landing lock when the node has one; again
// reports ErrTargetMoving.
func (n landNode) landOne(ctx context.Context, ws worktree.Workspace, c *landCounts) (again bool, err error) {
	if n.lock != nil {
		t0 := time.Now()
		waited, terr := n.lock.take(ctx)
		if terr != nil {
			return false, fmt.Errorf("take the landing lock: %w", terr)
		}
		if waited {
			c.waited.Add(1)
			c.waitNanos.Add(int64(time.Since(t0)))
		}
		defer func() { err = errors.Join(err, n.lock.release(ctx)) }()
	}
	_, err = n.m.Land(ctx, worktree.LandRequest{Repo: n.repo, MissionID: ws.MissionID, Attempt: 1, Workspace: ws})
	if errors.Is(err, worktree.ErrTargetMoving) {
		return true, nil
	}
	return false, err
}

// targetLock is one node's landing lock of benchTarget, taken through its Engine.
type targetLock struct {
	e    *engine.Engine
	node string
	sub  *engine.Subscription // changes committed on any node
}

// take blocks until the node holds the lock, and reports whether it had to wait. As the
// cluster lander, it reads the live locks first (a read commits nothing, so it wakes no other
// node) and takes the lock only when no other node holds it; otherwise, or when another node
// took it between the read and the take, it waits for the next committed change. The
// subscription is emptied before each read, so a release committed after the read still wakes
// it.
func (l *targetLock) take(ctx context.Context) (waited bool, err error) {
	for {
		select {
		case <-l.sub.Ready():
			l.sub.Take()
		default:
		}
		busy, err := l.heldElsewhere(ctx)
		if err != nil {
			return waited, err
		}
		if !busy {
			held, err := l.e.LandingLockTake(ctx, benchTarget, l.node, time.Minute)
			if err != nil || held {
				return waited, err
			}
		}
		waited = true
		select {
		case <-l.sub.Ready():
		case <-ctx.Done():
			return waited, ctx.Err()
		}
	}
}

// heldElsewhere reports whether another node holds a live lock of benchTarget.
func (l *targetLock) heldElsewhere(ctx context.Context) (bool, error) {
	ls, err := l.e.LandingLocks(ctx)
	if err != nil {
		return false, err
	}
	for _, lk := range ls {
		if lk.Target == benchTarget && lk.Node != l.node {
			return true, nil
		}
	}
	return false, nil
}

func (l *targetLock) release(ctx context.Context) error {
	return l.e.LandingLockRelease(ctx, benchTarget, l.node)
}

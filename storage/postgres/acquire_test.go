package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/storage/postgres"
	"github.com/mcp-scheduler/mcp-scheduler/storage/postgres/pgtest"
	"github.com/mcp-scheduler/mcp-scheduler/storage/storetest"
)

// openNodes opens n Stores on one fresh database, as n scheduler nodes hold it; all closed
// when t ends (before the database is dropped).
func openNodes(t *testing.T, n int) []*postgres.Store {
	url := pgtest.Database(t)
	out := make([]*postgres.Store, n)
	for i := range out {
		s, err := postgres.Open(context.Background(), url, postgres.Options{})
		require.NoError(t, err)
		t.Cleanup(func() { require.NoError(t, s.Close()) })
		out[i] = s
	}
	return out
}

// TestConformanceShared runs the two-handle cases on PostgreSQL: two Stores (two pools) on
// one database, as two nodes hold it.
func TestConformanceShared(t *testing.T) {
	storetest.ExerciseShared(t, func(t *testing.T) (engine.Store, engine.Store) {
		s := openNodes(t, 2)
		return s[0], s[1]
	})
}

var nodeT0 = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

// nodeMission is a pending mission of repository /repo with write area area (nil:
// exclusive in the repository).
func nodeMission(id string, created time.Time, area ...string) *domain.Mission {
	return &domain.Mission{ID: id, Title: "mission " + id, Brief: "do " + id, Repository: "/repo", Priority: 100,
		Kind: domain.KindWork, Review: "none", State: domain.StatePending, Landing: domain.LandingNone,
		WriteArea: area, CreatedAt: created, UpdatedAt: created}
}

// insertMissions stores ms, and a conflict edge between the first two when conflict is set
// (what the engine records for overlapping write areas).
func insertMissions(t *testing.T, s engine.Store, conflict bool, ms ...*domain.Mission) {
	ctx := context.Background()
	require.NoError(t, s.Update(ctx, func(tx engine.Tx) error {
		for _, m := range ms {
			if err := tx.MissionInsert(ctx, m); err != nil {
				return err
			}
		}
		if !conflict {
			return nil
		}
		return tx.DependencyInsert(ctx, domain.Dependency{MissionID: ms[1].ID, DependsOn: ms[0].ID,
			Type: domain.EdgeConflict, Reason: "write areas overlap", Source: domain.SourceScheduler, CreatedAt: nodeT0})
	}))
}

// acquireOn runs one acquire of repository /repo on s for owner; "" when there was no work.
func acquireOn(ctx context.Context, s engine.Store, owner string, now time.Time) (string, error) {
	var id string
	err := s.Update(ctx, func(tx engine.Tx) error {
		a, err := tx.MissionAcquire(ctx, engine.AcquireQuery{Now: now, Owner: owner, LeaseTTL: time.Minute,
			Repository: "/repo", Start: true})
		id = a.ID
		return err
	})
	if errors.Is(err, domain.ErrNoWork) {
		return "", nil
	}
	return id, err
}

// TestAcquire_TwoNodesLeaseOneOfTwoConflictingMissions: two nodes acquire at the same moment
// in one repository holding two missions that may not run together (write areas that
// overlap, joined by a conflict edge; or both exclusive in the repository): each round
// exactly one of them is leased, the other node finds no work. Over many rounds the two
// transactions overlap; without serializable isolation (at READ COMMITTED) the second sees
// the first's mission still pending and leases its own: both run.
func TestAcquire_TwoNodesLeaseOneOfTwoConflictingMissions(t *testing.T) {
	for _, c := range []struct {
		name     string
		conflict bool
		a, b     []string
	}{
		{"OverlappingWriteAreas", true, []string{"src/"}, []string{"src/engine/store.go"}},
		{"ExclusiveInTheRepository", false, nil, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			nodes := openNodes(t, 2)
			insertMissions(t, nodes[0], c.conflict, nodeMission("a", nodeT0, c.a...), nodeMission("b", nodeT0.Add(time.Millisecond), c.b...))
			const rounds = 60
			for round := range rounds {
				requireOneLeased(t, nodes, round)
			}
		})
	}
}

// requireOneLeased runs one round: both nodes acquire at once; exactly one gets a mission,
// and the database holds exactly one live mission; then that mission goes back to pending.
func requireOneLeased(t *testing.T, nodes []*postgres.Store, round int) {
	ctx := context.Background()
	now := nodeT0.Add(time.Duration(round+1) * time.Minute)
	start := make(chan struct{})
	got := make([]string, len(nodes))
	errs := make([]error, len(nodes))
	var wg sync.WaitGroup
	for i, s := range nodes {
		wg.Go(func() {
			<-start
			got[i], errs[i] = acquireOn(ctx, s, fmt.Sprintf("node-%d", i), now)
		})
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		require.NoError(t, err, "round %d, node %d", round, i)
	}
	var leased []string
	for _, id := range got {
		if id != "" {
			leased = append(leased, id)
		}
	}
	require.Len(t, leased, 1, "round %d: the nodes leased %v (at most one may run, and one can)", round, got)
	var fences []domain.Fence
	require.NoError(t, nodes[0].View(ctx, func(r engine.Reader) error {
		var err error
		fences, err = r.LeaseFences(ctx)
		return err
	}))
	require.Len(t, fences, 1, "round %d: live missions %v", round, fences)
	release(t, nodes[1], fences[0])
}

// release puts the leased mission of f back to pending, as an interrupted attempt would.
func release(t *testing.T, s engine.Store, f domain.Fence) {
	ctx := context.Background()
	require.NoError(t, s.Update(ctx, func(tx engine.Tx) error {
		m, err := tx.MissionGet(ctx, f.MissionID)
		if err != nil {
			return err
		}
		g := engine.Guard{State: m.State, Epoch: m.Lease.Epoch}
		m.State, m.Lease.Owner, m.Lease.ExpiresAt = domain.StatePending, "", time.Time{}
		return tx.MissionSet(ctx, engine.MissionChange{Row: &m, From: g,
			Set: engine.FieldState | engine.FieldLeaseOwner | engine.FieldLeaseExpiresAt})
	}))
}

// TestAcquire_TwoNodesNeverLeaseAMissionTwice: agents on two nodes acquire concurrently
// until no work is left; every mission is leased once, at epoch 1, to the agent that got it.
func TestAcquire_TwoNodesNeverLeaseAMissionTwice(t *testing.T) {
	nodes := openNodes(t, 2)
	const missions, agentsPerNode = 40, 3
	ms := make([]*domain.Mission, 0, missions)
	for i := range missions {
		id := fmt.Sprintf("m%02d", i)
		ms = append(ms, nodeMission(id, nodeT0.Add(time.Duration(i)*time.Millisecond), id+"/"))
	}
	insertMissions(t, nodes[0], false, ms...)
	ctx := context.Background()
	var mu sync.Mutex
	owners := map[string][]string{}
	var wg sync.WaitGroup
	errs := make(chan error, len(nodes)*agentsPerNode)
	for n, s := range nodes {
		for a := range agentsPerNode {
			owner := fmt.Sprintf("node-%d/agent-%d", n, a)
			wg.Go(func() {
				for {
					id, err := acquireOn(ctx, s, owner, nodeT0.Add(time.Hour))
					if err != nil || id == "" {
						errs <- err
						return
					}
					mu.Lock()
					owners[id] = append(owners[id], owner)
					mu.Unlock()
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.Len(t, owners, missions)
	require.NoError(t, nodes[1].View(ctx, func(r engine.Reader) error {
		for id, o := range owners {
			require.Len(t, o, 1, "%s leased to %v", id, o)
			m, err := r.MissionGet(ctx, id)
			require.NoError(t, err)
			require.Equal(t, o[0], m.Lease.Owner, id)
			require.Equal(t, int64(1), m.Lease.Epoch, id)
			require.Equal(t, domain.StateRunning, m.State, id)
		}
		return nil
	}))
}

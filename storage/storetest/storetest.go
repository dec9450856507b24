// Package storetest is the conformance suite of the engine's Store seam (engine/store.go):
// what every backend must do, stated as tests that know nothing of the backend. storage runs
// it on SQLite (storage/conformance_test.go); a PostgreSQL backend runs it unchanged.
//
// The suite is shaped like River's driver tests (riverdriver/riverdrivertest): one sub-test
// per method of the seam, each case on a fresh store from the backend's opener, grouped in
// one file per area (missions, acquire, leases, listings, graph, voyages, events,
// escalations, records, holds, leader, prune, transactions) so that a change to one area
// touches one file. It asserts only what the seam's documentation promises: sentinel errors
// by errors.Is, orders only where a method documents one (otherwise as sets), times to the
// millisecond, JSON by value not by bytes.
package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// Opener returns a fresh, empty, migrated store for one test case and arranges for it to be
// closed when t ends (t.Cleanup).
type Opener func(t *testing.T) engine.Store

// area is one file's share of the suite.
type area struct {
	name string
	run  func(t *testing.T, open Opener)
}

// areas lists the suite's areas in the order they run; each lives in the file of its name.
var areas = []area{
	{"Missions", exerciseMissions},
	{"Acquire", exerciseAcquire},
	{"Leases", exerciseLeases},
	{"Listings", exerciseListings},
	{"Graph", exerciseGraph},
	{"Voyages", exerciseVoyages},
	{"Events", exerciseEvents},
	{"Escalations", exerciseEscalations},
	{"Records", exerciseRecords},
	{"Holds", exerciseHolds},
	{"RateWindows", exerciseRateWindows},
	{"Leader", exerciseLeader},
	{"Nodes", exerciseNodes},
	{"LandingLocks", exerciseLandingLocks},
	{"Workspaces", exerciseWorkspaces},
	{"Prune", exercisePrune},
	{"Transactions", exerciseTransactions},
	{"Notices", exerciseNotices},
	{"Usage", exerciseUsage},
	{"TokenLimits", exerciseTokenLimits},
	{"Metrics", exerciseMetrics},
}

// Exercise runs the whole suite against the backend open makes. Every case calls open once
// and runs in parallel with the others (t.Parallel), so open must give each call its own
// store (a fresh file, schema or database).
// After the areas it fails for every seam method that no case group checks (see
// coveredBy), so that a method added to the seam cannot go untested.
func Exercise(t *testing.T, open Opener) {
	t.Helper()
	r := recordOf(t)
	for _, a := range areas {
		t.Run(a.name, func(t *testing.T) {
			r.add(r.areas, a.name)
			a.run(t, open)
		})
	}
	checkCoverage(t)
}

// t0 is the suite's clock: every time it writes is t0 plus whole milliseconds, the precision
// the seam keeps.
var t0 = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

// env is one test case: its store and a counter that gives each new row a later creation
// time.
type env struct {
	t   *testing.T
	ctx context.Context
	s   engine.Store
	n   int
}

// run declares the case name of t, on a fresh store; fn gets the case's own t.
func run(t *testing.T, name string, open Opener, fn func(t *testing.T, e *env)) {
	t.Helper()
	t.Run(name, func(t *testing.T) {
		t.Parallel()
		fn(t, &env{t: t, ctx: context.Background(), s: open(t)})
	})
}

// update runs fn in one write transaction and requires it to commit.
func (e *env) update(fn func(tx engine.Tx) error) {
	e.t.Helper()
	require.NoError(e.t, e.s.Update(e.ctx, fn))
}

// view runs fn on a read snapshot and requires no error.
func (e *env) view(fn func(r engine.Reader) error) {
	e.t.Helper()
	require.NoError(e.t, e.s.View(e.ctx, fn))
}

// next returns the next creation time (t0 + n ms).
func (e *env) next() time.Time {
	e.n++
	return t0.Add(time.Duration(e.n) * time.Millisecond)
}

// mission builds a pending work mission in repository /repo with its own write area (so that
// it is not exclusive), created after every mission built before it; mods adjust it.
func (e *env) mission(id string, mods ...func(*domain.Mission)) *domain.Mission {
	at := e.next()
	m := &domain.Mission{ID: id, Title: "mission " + id, Brief: "do " + id, Repository: "/repo",
		Priority: 100, Kind: domain.KindWork, Review: "none", RetryBudget: 3, State: domain.StatePending,
		Landing: domain.LandingNone, WriteArea: []string{id + "/"}, CreatedAt: at, UpdatedAt: at}
	for _, mod := range mods {
		mod(m)
	}
	return m
}

// insert stores missions in one transaction.
func (e *env) insert(ms ...*domain.Mission) {
	e.t.Helper()
	e.update(func(tx engine.Tx) error {
		for _, m := range ms {
			if err := tx.MissionInsert(e.ctx, m); err != nil {
				return err
			}
		}
		return nil
	})
}

// add builds and stores one mission (see mission).
func (e *env) add(id string, mods ...func(*domain.Mission)) *domain.Mission {
	e.t.Helper()
	m := e.mission(id, mods...)
	e.insert(m)
	return m
}

// get reads one mission, which must exist.
func (e *env) get(id string) domain.Mission {
	e.t.Helper()
	var m domain.Mission
	e.view(func(r engine.Reader) error {
		var err error
		m, err = r.MissionGet(e.ctx, id)
		return err
	})
	return m
}

// set rewrites a stored mission through MissionSet (every field), guarded by its current state and epoch.
func (e *env) set(id string, mod func(*domain.Mission)) domain.Mission {
	e.t.Helper()
	var m domain.Mission
	e.update(func(tx engine.Tx) error {
		var err error
		if m, err = tx.MissionGet(e.ctx, id); err != nil {
			return err
		}
		g := engine.Guard{State: m.State, Epoch: m.Lease.Epoch}
		mod(&m)
		return tx.MissionSet(e.ctx, engine.MissionChange{Row: &m, From: g, Set: engine.AllMissionFields})
	})
	return m
}

// voyage stores an open voyage.
func (e *env) voyage(id string, mods ...func(*domain.Voyage)) *domain.Voyage {
	e.t.Helper()
	at := e.next()
	v := &domain.Voyage{ID: id, Title: "voyage " + id, Repository: "/repo", State: domain.VoyageOpen, CreatedAt: at, UpdatedAt: at}
	for _, mod := range mods {
		mod(v)
	}
	e.update(func(tx engine.Tx) error { return tx.VoyageInsert(e.ctx, v) })
	return v
}

// edge stores a dependency of type typ: from depends on to.
func (e *env) edge(from, to string, typ domain.EdgeType, source string) {
	e.t.Helper()
	e.update(func(tx engine.Tx) error {
		return tx.DependencyInsert(e.ctx, domain.Dependency{MissionID: from, DependsOn: to, Type: typ,
			Source: source, Reason: "test", CreatedAt: e.next()})
	})
}

// Mission modifiers.

func inState(s domain.MissionState) func(*domain.Mission) {
	return func(m *domain.Mission) { m.State = s }
}

func withPriority(p int) func(*domain.Mission) { return func(m *domain.Mission) { m.Priority = p } }

func inRepo(r string) func(*domain.Mission) { return func(m *domain.Mission) { m.Repository = r } }

func exclusive(m *domain.Mission) { m.WriteArea = nil }

func inVoyage(v string) func(*domain.Mission) { return func(m *domain.Mission) { m.VoyageID = v } }

// leasedTo makes a mission leased by owner at epoch, expiring at exp.
func leasedTo(owner string, epoch int64, exp time.Time) func(*domain.Mission) {
	return func(m *domain.Mission) {
		m.State, m.Lease = domain.StateLeased, domain.Lease{Owner: owner, Epoch: epoch, ExpiresAt: exp}
		m.Attempt = int(epoch)
	}
}

// ids returns the ids of missions, in their order.
func ids(ms []domain.Mission) []string {
	var out []string // nil for none
	for _, m := range ms {
		out = append(out, m.ID)
	}
	return out
}

// nonZero drops the states counted zero: a backend may keep or omit them.
func nonZero[K comparable](m map[K]int) map[K]int {
	out := map[K]int{}
	for k, n := range m {
		if n != 0 {
			out[k] = n
		}
	}
	return out
}

// isAny reports whether err is one of targets.
func isAny(err error, targets ...error) bool {
	for _, t := range targets {
		if errors.Is(err, t) {
			return true
		}
	}
	return false
}

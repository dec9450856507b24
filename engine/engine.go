package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"log/slog"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"
)

// Options configure an Engine. Zero values take the defaults of the design brief §10.
type Options struct {
	Clock Clock
	// LeaseTTL is how long a lease lives without a heartbeat (default 60s).
	LeaseTTL time.Duration
	// RenewInterval is the least time between two lease writes for one mission: heartbeats
	// that come sooner are answered from a read (default 1s).
	RenewInterval time.Duration
	// Backoff is the retry delay policy (default 5s doubling to 5m, ±20% jitter).
	Backoff Backoff
	// DefaultRepository is used when a mission names none (the git top level of the server's
	// working directory). Empty: a mission must name one.
	DefaultRepository string
	// ResolveRepository canonicalises and authorises a repository path; it returns an error
	// for repositories that are not configured. nil: filepath.Abs + Clean, anything allowed.
	ResolveRepository func(path string) (string, error)
	// DebugAvailable tells the failure policy whether a debugger persona can be dispatched, so
	// that a repeated failure may become a debugger mission (decision debug).
	DebugAvailable func() bool
	// AbandonLimit is how many attempts in a row may end abandoned (their agent never heard
	// from) before the mission is blocked with an "abandoned" escalation (default 3).
	AbandonLimit int
	Logger       *slog.Logger
	// Budgets are the profiles' daily caps and the day they count (ReportUsage, ProfileDayHold).
	Budgets Budgets
	// Observer, when set, is told of the attempts started and ended once their transaction
	// committed (engine/metrics.go); nil tells no one.
	Observer Observer
}

// Engine applies the mission rules (design brief §2–§4) on top of a Store. It holds no
// missions in memory: every decision reads the store inside the transaction that writes it.
// It is safe for concurrent use by many goroutines and, through the store, many processes.
type Engine struct {
	store Store
	clock Clock
	opt   Options
	ids   *idGen
	hub   *Hub
	log   *slog.Logger

	// budgets are the profiles' daily caps and their day: Options.Budgets at New, replaced
	// whole by SetBudgets (a configuration reload) while the engine runs.
	budgets atomic.Pointer[Budgets]

	renewMu sync.Mutex
	renewed map[domain.Fence]renewal // last lease write per attempt, for RenewInterval

	// testHookReap runs between reading expired leases and updating them (tests only).
	testHookReap func()
}

// New returns an engine over store.
func New(store Store, opt Options) *Engine {
	if opt.Clock == nil {
		opt.Clock = SystemClock{}
	}
	if opt.LeaseTTL == 0 {
		opt.LeaseTTL = 60 * time.Second
	}
	if opt.RenewInterval == 0 {
		opt.RenewInterval = time.Second
	}
	opt.Backoff = opt.Backoff.withDefaults()
	if opt.AbandonLimit <= 0 {
		opt.AbandonLimit = DefaultAbandonLimit
	}
	if opt.Logger == nil {
		opt.Logger = slog.New(slog.DiscardHandler)
	}
	if opt.ResolveRepository == nil {
		opt.ResolveRepository = func(p string) (string, error) { return filepath.Abs(p) }
	}
	e := &Engine{store: store, clock: opt.Clock, opt: opt, ids: newIDGen(), hub: NewHub(),
		log: opt.Logger, renewed: map[domain.Fence]renewal{}}
	e.budgets.Store(&opt.Budgets)
	return e
}

// Hub returns the engine's change hub (committed changes, for wake-ups and notifications).
func (e *Engine) Hub() *Hub { return e.hub }

// Store returns the engine's store.
func (e *Engine) Store() Store { return e.store }

// LeaseTTL returns the lease time-to-live.
func (e *Engine) LeaseTTL() time.Duration { return e.opt.LeaseTTL }

// Now returns the engine clock's time, truncated to milliseconds (the store's resolution).
func (e *Engine) Now() time.Time { return e.clock.Now().UTC().Truncate(time.Millisecond) }

// op is the state of one write transaction: the events it appended, published after commit.
type op struct {
	e      *Engine
	ctx    context.Context
	tx     Tx
	now    time.Time
	actor  string
	events []domain.Event
	// read holds each mission as this transaction read it (get), so that save writes only the
	// fields the transition changed.
	read map[string]domain.Mission
	// seen is what the Observer is told after commit (attempts started and ended).
	seen observed
}

// update runs fn in one store transaction and publishes its events once it committed.
func (e *Engine) update(ctx context.Context, actor string, fn func(o *op) error) error {
	var o *op
	err := e.store.Update(ctx, func(tx Tx) error {
		o = &op{e: e, ctx: ctx, tx: tx, now: e.Now(), actor: actor}
		return fn(o)
	})
	if err != nil {
		return err
	}
	changes := make([]Change, len(o.events))
	for i, ev := range o.events {
		changes[i] = Change{Seq: ev.Seq, Type: ev.Type, MissionID: ev.MissionID, VoyageID: ev.VoyageID}
	}
	e.hub.Publish(changes...)
	e.observe(o)
	return nil
}

// view runs fn on a read snapshot.
func (e *Engine) view(ctx context.Context, fn func(r Reader) error) error {
	return e.store.View(ctx, fn)
}

// viewValue runs read in one read transaction and returns its value.
func viewValue[T any](ctx context.Context, e *Engine, read func(r Reader) (T, error)) (T, error) {
	var out T
	err := e.view(ctx, func(r Reader) error {
		var err error
		out, err = read(r)
		return err
	})
	return out, err
}

// emit appends an event about mission m (nil for none) with data marshalled to JSON.
func (o *op) emit(typ string, m *domain.Mission, voyageID string, data any) error {
	ev := domain.Event{At: o.now, Type: typ, Actor: o.actor}
	if m != nil {
		ev.MissionID, ev.VoyageID, ev.Epoch, ev.Attempt = m.ID, m.VoyageID, m.Lease.Epoch, m.Attempt
	}
	if voyageID != "" {
		ev.VoyageID = voyageID
	}
	if data != nil {
		b, err := json.Marshal(data)
		if err != nil {
			return fmt.Errorf("event %s: %w", typ, err)
		}
		ev.Data = b
	}
	if err := o.tx.EventAppend(o.ctx, &ev); err != nil {
		return err
	}
	o.events = append(o.events, ev)
	return nil
}

// get reads a mission inside the transaction, naming it in a NotFoundError.
func (o *op) get(id string) (domain.Mission, error) {
	m, err := o.tx.MissionGet(o.ctx, id)
	if errors.Is(err, domain.ErrNotFound) {
		return m, &domain.NotFoundError{Kind: "mission", ID: id}
	}
	if err == nil {
		o.track(m)
	}
	return m, err
}

// track remembers m as this transaction read it (see save).
func (o *op) track(m domain.Mission) {
	if o.read == nil {
		o.read = map[string]domain.Mission{}
	}
	o.read[m.ID] = m
}

// move is one transition of m (read in this transaction) by op to state to: checked against
// the transition table, written as one guarded update, recorded as one event whose data
// carries from/to and extra. m is changed in place; callers set other fields before calling.
func (o *op) move(m *domain.Mission, to domain.MissionState, opName, eventType string, extra map[string]any) error {
	from := Guard{State: m.State, Epoch: m.Lease.Epoch}
	if from.State != to && !domain.CanTransition(from.State, to, opName) {
		return &domain.TransitionError{MissionID: m.ID, Op: opName, State: from.State}
	}
	m.State, m.UpdatedAt = to, o.now
	if err := o.save(m, from); err != nil {
		return err
	}
	data := map[string]any{"from": from.State, "to": to, "landing": m.Landing}
	for k, v := range extra {
		data[k] = v
	}
	return o.emit(eventType, m, "", data)
}

// save writes the fields of m that changed since this transaction read it (all of them when
// it was not read through get), in one statement guarded by g. A guard miss is a lost race:
// on a store with concurrent writers another transaction moved the mission after this one
// read it; it comes back as a *StaleError (ErrGuard, and ErrLeaseLost when g was a lease).
func (o *op) save(m *domain.Mission, g Guard) error {
	set := AllMissionFields
	if was, ok := o.read[m.ID]; ok {
		set = ChangedFields(&was, m)
	}
	if set == 0 {
		return nil
	}
	err := o.tx.MissionSet(o.ctx, MissionChange{Row: m, From: g, Set: set})
	if errors.Is(err, domain.ErrGuard) {
		return &StaleError{MissionID: m.ID, Expected: g, Err: err}
	}
	if err != nil {
		return err
	}
	o.track(*m)
	return nil
}

// fenced reads the mission an ownership operation speaks for and checks the caller still
// holds its lease: same epoch, state leased or running. Otherwise ErrLeaseLost.
func (o *op) fenced(f domain.Fence) (domain.Mission, error) {
	m, err := o.get(f.MissionID)
	if err != nil {
		return m, err
	}
	if m.Lease.Epoch != f.Epoch || !m.State.Leased() {
		return m, &domain.LeaseLostError{MissionID: m.ID, Presented: f.Epoch, Current: m.Lease.Epoch, State: m.State}
	}
	if o.actor == "" {
		o.actor = m.Lease.Owner // the lease holder acts: its events carry its id
	}
	return m, nil
}

func (e *Engine) forgetRenewal(f domain.Fence) {
	e.renewMu.Lock()
	delete(e.renewed, f)
	e.renewMu.Unlock()
}

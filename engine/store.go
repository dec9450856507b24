package engine

import (
	"context"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"time"
)

// Store is the durable state the engine needs (design brief §9). storage/ implements it on
// SQLite; another backend (PostgreSQL) implements the same interface and passes the same
// conformance suite.
//
// Update runs fn in one write transaction: everything fn writes commits together or not at
// all. View runs fn on a consistent read snapshot. Implementations translate their errors into
// the engine's sentinels (ErrNotFound, ErrDuplicateID, ErrGuard, ErrNoWork) at the boundary.
// Times are kept to the millisecond; raw JSON fields keep their value, not necessarily their
// bytes. storage/storetest is the conformance suite every implementation must pass.
//
// Transitions. Each mission transition is one guarded statement (Tx.MissionSet: UPDATE …
// WHERE id AND state AND epoch, naming only the columns the transition changed) plus its event
// row, in one Update; a completion is Tx.MissionComplete, which writes and returns the row in
// one statement without a read before it. A guard that matches no row is ErrGuard, never a
// partial write; the engine reports it as a lost race (*StaleError, and ErrLeaseLost for a
// lease).
//
// Concurrent writers. Update must behave as if its transactions ran one after another
// (serializable), whatever the backend:
//   - SQLite has one writer at a time: BEGIN IMMEDIATE takes the database's write lock (and
//     storage's cross-process file lock queues the processes of this program), so an Update's
//     reads and writes see no interleaved writer. Nothing more is needed for the rules below.
//   - A backend with concurrent writers (PostgreSQL) runs Update at SERIALIZABLE isolation, or
//     at READ COMMITTED taking the explicit locks listed below; either way a serialization
//     failure or deadlock (SQLSTATE 40001, 40P01) rolls the whole transaction back.
//   - Retries: an Update that failed only because the database was busy or the transaction
//     could not be serialized is run again from the start, with capped exponential backoff
//     (cenkalti/backoff), until the store's busy wait has passed; the caller sees only the
//     final outcome. fn may therefore run more than once and must derive everything it does
//     from its Tx (the engine's functions do: they read, decide and write inside fn).
//
// Rules that span rows, and how they stay safe:
//   - One lease per mission: the acquire is one statement that picks and leases (SQLite:
//     UPDATE … WHERE id = (SELECT … LIMIT 1) RETURNING; PostgreSQL: SELECT … FOR UPDATE SKIP
//     LOCKED in the same statement), and every later transition is guarded by the epoch.
//   - Write-area conflicts and exclusive-in-repository: whether a mission may start depends
//     on the other live missions of its repository. Under SQLite's single writer the acquire
//     sees them all. A concurrent-writer backend must serialise acquires per repository:
//     take a transaction-scoped lock on the repository first (pg_advisory_xact_lock on a hash
//     of it) or run at SERIALIZABLE, so that two acquires in one repository cannot both see
//     the other's mission as not yet running.
//   - Voyage order and dependencies: a mission becomes runnable when its upstream missions
//     complete and land; the upstream's transition and the downstream's acquire both touch the
//     dependency rows. A concurrent-writer backend locks the dependency rows it reads in the
//     acquire (FOR SHARE) or runs at SERIALIZABLE.
//   - Counters kept with the rows (mission counts, attempt outcomes) are updated in the same
//     transaction as the row, by trigger or statement; concurrent writers make that an
//     UPDATE … SET n = n + 1 (row-locked), never a read-modify-write in Go.
//
// Change notification: Changes (below) tells the engine that other processes committed, so
// the engine never polls the database itself.
type Store interface {
	Update(ctx context.Context, fn func(Tx) error) error
	View(ctx context.Context, fn func(Reader) error) error
	// Changes signals, on a one-slot channel that coalesces bursts and never blocks the
	// store, each time another process (or another Store handle on the same database) may
	// have committed; the engine publishes its own commits itself, with their events. It is
	// what lets the engine notice other processes without polling the database itself. The
	// channel closes when ctx ends or the store closes. A signal may be spurious (this
	// Store's own commit, a failed check), never missing: a subscriber re-reads what it
	// watches. interval bounds how late a backend that must poll notices a change (≤ 0: its
	// default). SQLite: another handle of the same process signals right after its commit;
	// other processes are noticed by PRAGMA data_version on a watcher connection, checked
	// every interval (a shared-memory read). PostgreSQL: LISTEN on a channel that every committing
	// transaction NOTIFYs (pg_notify in the same transaction, so it is sent only on commit;
	// interval unused), re-listening after a lost connection with one signal.
	Changes(ctx context.Context, interval time.Duration) <-chan struct{}
	// Close releases the store: Update and View fail afterwards (never wait); a second Close
	// returns the first one's result.
	Close() error
}

// HostLock is what a Store offers when its processes can prove a dead leader gone: a lock
// the kernel releases when its holder dies (storage: flock(2) on a file next to the
// database). The leader holds it while it leads; a process of the same host that gets it
// while the leader row names an unexpired leader of that host which had it knows that leader
// died, and takes the lease at once instead of waiting out its expiry. Processes of other
// hosts (a shared file system) still wait for expiry. The lease row and its epoch remain the
// fence: the lock only shortens the wait.
type HostLock interface {
	// TryLeaderLock takes the lock without waiting: true when this process holds it.
	TryLeaderLock() (bool, error)
	// ReleaseLeaderLock gives it up (nothing when not held).
	ReleaseLeaderLock() error
}

// LeaderTake is one attempt to take or renew the leader lease (Tx.LeaderTry).
type LeaderTake struct {
	Owner string
	Now   time.Time
	TTL   time.Duration
	Phase string
	// HostLocked: the taker holds the host's leader lock (HostLock), recorded on the row.
	HostLocked bool
	// Gone names a previous owner proved dead (it held the host lock, which the taker now
	// holds): its lease is taken even though it has not expired.
	Gone string
}

// Guard is what a guarded update expects to find: the row's state and epoch. The update
// matches no row (ErrGuard) when either differs.
type Guard struct {
	State domain.MissionState
	Epoch int64
}

// Acquired is a lease just taken (Tx.MissionAcquire): the few columns the acquire's own
// transaction needs, returned by the acquiring statement itself, and the whole mission when
// AcquireQuery.Row asked for it (else read it with MissionGet).
type Acquired struct {
	ID, VoyageID string
	State        domain.MissionState
	Attempt      int
	Lease        domain.Lease
	Profile      string
	// Resumed: the mission has a checkpoint to resume from.
	Resumed bool
	// VoyageActive: its voyage was already in progress, active or blocked (no activation to
	// record). Unlike Mission.VoyageActive, an open voyage's mission has it false: its acquire
	// activates the voyage.
	VoyageActive bool
	// Started is when the attempt started (q.Start), else zero.
	Started time.Time
	// Row is the whole mission as the acquiring statement left it (AcquireQuery.Row), else nil.
	Row *domain.Mission
}

// Fence returns the fence of the lease.
func (a Acquired) Fence() domain.Fence { return domain.Fence{MissionID: a.ID, Epoch: a.Lease.Epoch} }

// AcquireQuery selects the next runnable mission (design brief §3) and leases it in one
// statement. Empty filters match everything.
type AcquireQuery struct {
	Now          time.Time
	Owner        string               // lease owner: agent id or profile name
	Profile      string               // recorded on the mission
	LeaseTTL     time.Duration        // the lease expires at Now + LeaseTTL
	Start        bool                 // acquire and start in one step (state running instead of leased)
	MissionID    string               // only this mission (the scheduler already chose it)
	Repository   string               // only missions of this repository
	Capabilities []string             // the agent's capabilities: every required one must be offered
	Personas     []string             // the agent's personas: the mission's persona must be one (nil = any)
	Kinds        []domain.MissionKind // only these kinds (nil = any)
	// Exclude names missions not to pick (ids; nil = none): those the engine found held back
	// by a budget after an earlier pick of the same claim (VoyageHold). Ignored with MissionID.
	Exclude []string
	// Row returns the whole mission in Acquired.Row, from the acquiring statement itself
	// (RETURNING every column), instead of a read after the commit.
	Row bool
	// Node is the scheduler node taking the lease (cluster mode; "" on a single node),
	// recorded on the mission (domain.Mission.Node).
	Node string
}

// MissionFilter selects missions for listings, in id order. Cursor is the last id of the
// previous page; Limit is 1..1,000, else 100.
type MissionFilter struct {
	States     []domain.MissionState
	VoyageID   string
	Repository string
	Persona    string
	Kind       domain.MissionKind
	ParentID   string
	SubjectID  string
	Landing    domain.LandingState
	Cursor     string
	Limit      int
}

// EventFilter selects events in sequence order, after AfterSeq.
type EventFilter struct {
	AfterSeq  int64
	MissionID string
	VoyageID  string
	Types     []string
	Limit     int
}

// EscalationFilter selects escalations.
type EscalationFilter struct {
	State     string // open | resolved | "" (both)
	VoyageID  string
	MissionID string
	Route     domain.Route
	CauseID   string
	OnceKey   string // the de-duplication key of an escalation raised once (EscalateOnce)
	Limit     int
}

// Renewed is a lease after MissionRenew.
type Renewed struct {
	State     domain.MissionState
	Epoch     int64
	ExpiresAt time.Time
	Preempt   bool
}

// CompleteParams is a running attempt's completion (Tx.MissionComplete).
type CompleteParams struct {
	Fence domain.Fence
	// Attempt, when > 0, is guarded too: the completion matches only that attempt.
	Attempt int
	Now     time.Time
	Result  *domain.WorkerResult
}

// Leader is the row that decides which process runs the scheduler loop.
type Leader struct {
	Owner     string    `json:"owner"`
	Epoch     int64     `json:"epoch"`
	ExpiresAt time.Time `json:"expires_at"`
	Phase     string    `json:"phase,omitempty"`
	// HostLocked: the owner held the host's leader lock when it last took or renewed the
	// lease (see HostLock), so that a same-host successor holding the lock proves it gone.
	// Internal to the takeover rule: not part of the MCP surface.
	HostLocked bool `json:"-"`
}

// Overlap is a non-terminal mission with a write area in the same repository, for the
// write-area conflict check.
type Overlap struct {
	MissionID string
	WriteArea []string
}

// Reader is the read side of the store.
type Reader interface {
	MissionGet(ctx context.Context, id string) (domain.Mission, error)
	MissionByIdempotencyKey(ctx context.Context, key string) (domain.Mission, error)
	// MissionLease reads only a mission's lease (the heartbeat's read path).
	MissionLease(ctx context.Context, id string) (Renewed, error)
	MissionList(ctx context.Context, f MissionFilter) ([]domain.Mission, error)
	// MissionCounts returns the number of missions per state, from counters kept in the same
	// transactions as the missions (not by counting rows).
	MissionCounts(ctx context.Context) (map[domain.MissionState]int, error)
	// MissionsLeased returns leased and running missions (all of them).
	MissionsLeased(ctx context.Context) ([]domain.Mission, error)
	// LeaseFences returns the fence (id and epoch) of every leased or running mission: what
	// the monitor compares its supervised agents with each tick, without reading whole rows.
	LeaseFences(ctx context.Context) ([]domain.Fence, error)
	// MissionsExpired returns leased or running missions whose lease expired before now.
	MissionsExpired(ctx context.Context, now time.Time, limit int) ([]domain.Mission, error)
	// MissionsRunnableOrder returns pending and interrupted missions in pick order (design
	// brief §3), at most limit, whatever their dependencies.
	MissionsRunnableOrder(ctx context.Context, limit int) ([]domain.Mission, error)
	// MissionsLandingQueue returns completed missions whose landing can go on (landing
	// pending, approved, review or waiting), oldest first, at most limit; its cost follows the
	// queue's length, not the number of missions ever completed.
	MissionsLandingQueue(ctx context.Context, limit int) ([]domain.Mission, error)
	// MissionsLandingAwaiting returns completed missions whose landing waits for approval
	// or for a repair mission (landing approval or repair), oldest first, at most limit; like
	// the queue, its cost follows how many wait, not the history.
	MissionsLandingAwaiting(ctx context.Context, limit int) ([]domain.Mission, error)
	// MissionsPastDeadline returns non-terminal missions whose deadline passed and that have no
	// deadline escalation yet.
	MissionsPastDeadline(ctx context.Context, now time.Time, limit int) ([]domain.Mission, error)

	DependenciesOf(ctx context.Context, missionID string) ([]domain.Dependency, error) // edges from missionID
	DependentsOf(ctx context.Context, missionID string) ([]domain.Dependency, error)   // edges to missionID
	// WriteAreaOverlaps returns candidate missions whose write-area literal prefixes are
	// related to one of prefixes (one a prefix of the other) in repository.
	WriteAreaOverlaps(ctx context.Context, repository string, prefixes []string) ([]Overlap, error)

	VoyageGet(ctx context.Context, id string) (domain.Voyage, error)
	VoyageByIdempotencyKey(ctx context.Context, key string) (domain.Voyage, error)
	VoyageList(ctx context.Context, states []domain.VoyageState, limit int) ([]domain.Voyage, error)
	VoyageMissions(ctx context.Context, voyageID string) ([]domain.Mission, error)
	// VoyageCounts counts voyages per state.
	VoyageCounts(ctx context.Context) (map[domain.VoyageState]int, error)
	// EscalationCount counts escalations in a state (open, resolved).
	EscalationCount(ctx context.Context, state string) (int, error)
	// AgentCount counts the agents the scheduler knows.
	AgentCount(ctx context.Context) (int, error)

	EventList(ctx context.Context, f EventFilter) ([]domain.Event, error)
	EscalationGet(ctx context.Context, id string) (domain.Escalation, error)
	EscalationList(ctx context.Context, f EscalationFilter) ([]domain.Escalation, error)
	AttemptList(ctx context.Context, missionID string) ([]domain.Attempt, error)
	// AttemptOutcomes counts finished attempts by profile and persona: total and completed,
	// from counters kept in the attempts' own transactions (not by counting rows).
	AttemptOutcomes(ctx context.Context) ([]OutcomeCount, error)
	LandingList(ctx context.Context, missionID string) ([]domain.Landing, error)
	// WorkspaceGet returns the workspace record of one attempt (ErrNotFound when none).
	WorkspaceGet(ctx context.Context, missionID string, attempt int) (WorkspaceRecord, error)
	// WorkspaceList returns a mission's workspace records, oldest attempt first.
	WorkspaceList(ctx context.Context, missionID string) ([]WorkspaceRecord, error)
	AgentList(ctx context.Context) ([]domain.Agent, error)
	// AgentsSeenSince returns the agents seen at or after since, most recent first, at most
	// 1,000, without their running counts (the planner's read: bounded by recent activity,
	// not by every agent ever seen).
	AgentsSeenSince(ctx context.Context, since time.Time) ([]domain.Agent, error)
	WaveLatest(ctx context.Context) (domain.Wave, error)
	// HoldList returns every recorded hold (the planner keeps at most one planning step's
	// worth: bounded by its wave size, not by history).
	HoldList(ctx context.Context) ([]Hold, error)
	// HoldGet returns the hold of one mission (ErrNotFound when it is not held).
	HoldGet(ctx context.Context, missionID string) (Hold, error)
	// HoldCounts counts the recorded holds of missions still waiting, per reason code: to run
	// (pending, interrupted), or, completed, to land (landing pending, review, approved,
	// waiting, approval or repair: the landings the planner gives a wait).
	HoldCounts(ctx context.Context) (map[string]int, error)
	// RateWindowList returns every stored rate-limit window (one per limit group: bounded by
	// the configured profiles), by group.
	RateWindowList(ctx context.Context) ([]RateWindow, error)
	// MetricCounts reads what a metrics scrape shows of the stored rows (engine.MetricCounts:
	// missions and voyages per state, holds per code, unsettled landings per state, live
	// missions per profile, open escalations) from counters and partial indexes of live work
	// only, so that its cost does not grow with history.
	MetricCounts(ctx context.Context) (MetricCounts, error)
	// PruneCandidates returns finished (terminal) missions created before q.Before, after
	// q.Cursor, at most q.Limit, in a stable order served by an index; the engine decides
	// which of them may go (Engine.PruneHistory).
	PruneCandidates(ctx context.Context, q PruneQuery) ([]PruneCandidate, error)
	// UnfinishedRelated counts the unfinished missions that depend on missionID (any edge)
	// and those that are its children or work on it (parent or subject), from indexes.
	UnfinishedRelated(ctx context.Context, missionID string) (dependents, related int, err error)
	// VoyagePruneCandidates returns completed or cancelled voyages settled before q.Before,
	// after q.Cursor, at most q.Limit.
	VoyagePruneCandidates(ctx context.Context, q PruneQuery) ([]PruneCandidate, error)
	Paused(ctx context.Context) (bool, error)
	LeaderGet(ctx context.Context) (Leader, error)
	// NodeGet returns the node lease of name (a zero Node with Name set when none was ever
	// taken).
	NodeGet(ctx context.Context, name string) (Node, error)
	// NodeList returns every node lease ever taken, expired ones included, by name.
	NodeList(ctx context.Context) ([]Node, error)
	// LandingLocks returns the landing locks live at now (expires_at after now), by target.
	LandingLocks(ctx context.Context, now time.Time) ([]LandingLock, error)

	// The notification outbox (engine/outbox.go). NoticeCursor is the sequence of the last
	// event turned into notices (a new store starts at its newest event, 0 when empty).
	NoticeCursor(ctx context.Context) (int64, error)
	// NoticesDue returns the notices not given up whose NextAt is at or before now, by NextAt
	// then ID, at most limit (1..1,000, else 100).
	NoticesDue(ctx context.Context, now time.Time, limit int) ([]Notice, error)
	// NoticeCounts counts the notices not given up (Pending, and Failing: Attempts > 0) and
	// those given up.
	NoticeCounts(ctx context.Context) (NoticeCounts, error)
	// NoticesGaveUp returns the given-up notices, most recently given up first, at most limit
	// (1..1,000, else 100).
	NoticesGaveUp(ctx context.Context, limit int) ([]Notice, error)
	// UsageRunningGet returns the running spend of a mission's attempt in flight (ErrNotFound
	// when none was reported or the attempt ended).
	UsageRunningGet(ctx context.Context, missionID string) (RunningUsage, error)
	// UsageRunningList returns the running spend of every attempt in flight (bounded by the
	// attempts in flight, not by history), by mission id.
	UsageRunningList(ctx context.Context) ([]RunningUsage, error)
	// SpendDayGet returns what profile spent on day (DayKey); zero usage when nothing.
	SpendDayGet(ctx context.Context, profile, day string) (domain.Usage, error)
	// SpendDayList returns what every profile spent on day (DayKey), by profile name; an
	// empty map when nothing was spent.
	SpendDayList(ctx context.Context, day string) (map[string]domain.Usage, error)
	// MissionTokenLimitGet returns a mission's token limit (input plus output tokens; 0:
	// none), kept out of the mission's row as MissionGet returns it; ErrNotFound: no mission.
	MissionTokenLimitGet(ctx context.Context, id string) (int64, error)
}

// PruneQuery pages through prune candidates: created (missions) or settled (voyages) before
// Before, after Cursor ("" from the start; otherwise the Cursor of the last candidate seen).
type PruneQuery struct {
	Before time.Time
	Cursor string
	Limit  int
}

// PruneCandidate is a row that may be pruned if the engine's rule allows; Cursor continues
// the listing after it.
type PruneCandidate struct {
	ID     string
	Cursor string
}

// PruneCounts is what a prune removed (or, in a dry run, would remove), per table.
type PruneCounts struct {
	Missions    int `json:"missions"`
	Voyages     int `json:"voyages"`
	Events      int `json:"events"`
	Attempts    int `json:"attempts"`
	Landings    int `json:"landings"`
	Workspaces  int `json:"workspaces"`
	Escalations int `json:"escalations"`
	Waves       int `json:"waves"`
}

// Add adds o's counts to c.
func (c *PruneCounts) Add(o PruneCounts) {
	c.Missions += o.Missions
	c.Voyages += o.Voyages
	c.Events += o.Events
	c.Attempts += o.Attempts
	c.Landings += o.Landings
	c.Workspaces += o.Workspaces
	c.Escalations += o.Escalations
	c.Waves += o.Waves
}

// OutcomeCount is the attempt history of one (profile, persona) pair.
type OutcomeCount struct {
	Profile, Persona string
	Total, Completed int
}

// Tx is a write transaction.
type Tx interface {
	Reader
	MissionInsert(ctx context.Context, m *domain.Mission) error
	// MissionSet is one guarded transition: it writes the fields c.Set of c.Row, and only
	// those, in one statement (SQL: UPDATE … SET <those columns> WHERE id = ? AND state = ?
	// AND epoch = ?), where the row still has c.From's state and epoch; ErrGuard when it does
	// not (nothing is written). The engine names the fields each transition changed.
	MissionSet(ctx context.Context, c MissionChange) error
	// MissionAcquire leases the first runnable mission matching q (ErrNoWork when none):
	// state leased (or running when q.Start), epoch+1, attempt+1, lease owner and expiry,
	// Contacted false. It returns only what the lease needs (Acquired), not the whole row.
	MissionAcquire(ctx context.Context, q AcquireQuery) (Acquired, error)
	// MissionRenew extends a live lease presented with its epoch; ErrGuard otherwise. contact
	// records that the attempt's agent was heard from (Mission.Contacted; a renewal by the
	// server on the agent's behalf passes false). It returns the lease as renewed (a
	// heartbeat's answer, nothing more: the hot path).
	MissionRenew(ctx context.Context, f domain.Fence, expiresAt time.Time, contact bool) (Renewed, error)
	// MissionComplete completes a running attempt in one guarded statement: where the row is
	// running at p.Fence's epoch with landing none (and attempt p.Attempt when > 0), it sets
	// state completed, landing pending, result p.Result, updated_at and finished_at p.Now, no
	// lease expiry, preempt false and abandons 0, and returns the whole row as written. Usage
	// and every other column are left as they were. ErrGuard when no row matched (nothing is
	// written).
	MissionComplete(ctx context.Context, p CompleteParams) (domain.Mission, error)
	// MissionDelete removes a mission with its edges, write areas and hold; ErrNotFound when
	// it is gone.
	MissionDelete(ctx context.Context, id string) error

	// DependencyInsert stores an edge; the same (mission, depends_on, type) twice is
	// ErrDuplicateID, except that an edge from any other source replaces a scheduler-made one.
	DependencyInsert(ctx context.Context, d domain.Dependency) error
	// DependencyDeleteConflicts removes scheduler-made conflict edges touching missionID.
	DependencyDeleteConflicts(ctx context.Context, missionID string) ([]domain.Dependency, error)
	// WriteAreaSet records missionID's write-area literal prefixes (replacing older ones);
	// nil prefixes clear them.
	WriteAreaSet(ctx context.Context, missionID, repository string, prefixes []string) error

	VoyageInsert(ctx context.Context, v *domain.Voyage) error
	VoyageUpdate(ctx context.Context, v *domain.Voyage, expect domain.VoyageState) error

	EventAppend(ctx context.Context, e *domain.Event) error
	EscalationInsert(ctx context.Context, e *domain.Escalation) error
	EscalationUpdate(ctx context.Context, e *domain.Escalation) error
	AttemptInsert(ctx context.Context, a *domain.Attempt) error
	LandingUpsert(ctx context.Context, l *domain.Landing) error
	// WorkspacePut records (or, for the same mission and attempt, replaces) a workspace.
	WorkspacePut(ctx context.Context, w *WorkspaceRecord) error
	// WorkspaceMarkRemoved sets an attempt's workspace removed at at (ErrNotFound when none).
	WorkspaceMarkRemoved(ctx context.Context, missionID string, attempt int, at time.Time) error
	AgentUpsert(ctx context.Context, a *domain.Agent) error
	WaveInsert(ctx context.Context, w *domain.Wave) error
	// HoldUpsert records (or replaces) the hold of h.MissionID. A hold goes away with its
	// mission, else by HoldDelete; a hold of a mission that no longer exists (pruned since the
	// planner's snapshot) is not recorded, and that is no error.
	HoldUpsert(ctx context.Context, h *Hold) error
	// HoldDelete removes the hold of a mission (none: no error).
	HoldDelete(ctx context.Context, missionID string) error
	// RateWindowPut records (or replaces) the window of w.Group.
	RateWindowPut(ctx context.Context, w *RateWindow) error
	// RateWindowDelete removes a group's window (none: no error).
	RateWindowDelete(ctx context.Context, group string) error
	SetPaused(ctx context.Context, paused bool) error
	// LeaderTry takes or renews leadership for t.Owner when the row is free, expired, already
	// t.Owner's, or held by t.Gone with the host lock; it returns the leader row after the
	// attempt (Owner != t.Owner: someone else leads).
	LeaderTry(ctx context.Context, t LeaderTake) (Leader, error)
	// MissionPrune deletes a mission with what was recorded only for it: its events,
	// attempts, landings, workspace rows, dependencies and write areas, and the resolved
	// escalations that concern no mission or voyage still stored. ErrNotFound when it is gone.
	MissionPrune(ctx context.Context, id string) (PruneCounts, error)
	// VoyagePrune deletes a voyage that has no mission left, with its events and the resolved
	// escalations that concern nothing still stored; ErrGuard when missions remain.
	VoyagePrune(ctx context.Context, id string) (PruneCounts, error)
	// PruneGlobal deletes at most limit waves and events that belong to no mission or voyage
	// (scheduler and leader events) from before before.
	PruneGlobal(ctx context.Context, before time.Time, limit int) (PruneCounts, error)
	// LeaderResign gives up leadership held by owner at epoch.
	LeaderResign(ctx context.Context, owner string, epoch int64) error
	// NodeTry takes or renews the node lease of t.Name for t.Owner when it is free (never
	// taken), expired, or already t.Owner's, and returns the row after the attempt
	// (Owner != t.Owner: another process runs that node). A take by a new owner raises the
	// epoch and sets Since to t.Now; a renewal keeps both.
	NodeTry(ctx context.Context, t NodeTake) (Node, error)
	// NodeResign ends the node lease of name held by owner at epoch (its expiry becomes
	// now's); anything else changes nothing and is no error.
	NodeResign(ctx context.Context, name, owner string, epoch int64, now time.Time) error
	// NodeForget deletes the node lease row of name when its lease had expired at now (a
	// node that will not come back), in one guarded statement, and reports whether it did; a
	// live node's row, or none, is left alone.
	NodeForget(ctx context.Context, name string, now time.Time) (bool, error)
	// LandingLockTry takes the landing lock of l.Target for l.Node until l.ExpiresAt when it
	// is free, expired at now, or already l.Node's (a renewal), in one guarded statement, and
	// reports whether l.Node holds it afterwards; another node's live lock is left as it is.
	LandingLockTry(ctx context.Context, l LandingLock, now time.Time) (bool, error)
	// LandingLockRelease deletes the landing lock of target when node holds it; anything else
	// changes nothing and is no error.
	LandingLockRelease(ctx context.Context, target, node string) error

	// NoticeEnqueue inserts ns (setting each ID, in order) and sets the notice cursor to
	// cursor, in this transaction.
	NoticeEnqueue(ctx context.Context, cursor int64, ns []Notice) error
	// NoticeDelete removes a notice (delivered); an absent one is no error.
	NoticeDelete(ctx context.Context, id int64) error
	// NoticeRetry writes n's Attempts, NextAt, LastError and GaveUpAt; ErrNotFound when the
	// notice is gone.
	NoticeRetry(ctx context.Context, n *Notice) error
	// NoticePrune deletes the notices given up before before and returns how many.
	NoticePrune(ctx context.Context, before time.Time) (int, error)
	// UsageRunningPut records (or replaces) the running spend of u.MissionID's attempt. It
	// goes away with its mission, else by UsageRunningDelete.
	UsageRunningPut(ctx context.Context, u *RunningUsage) error
	// UsageRunningDelete removes a mission's running spend (none: no error).
	UsageRunningDelete(ctx context.Context, missionID string) error
	// SpendDayAdd adds u to what profile spent on day (DayKey), creating the row.
	SpendDayAdd(ctx context.Context, profile, day string, u domain.Usage) error
	// MissionTokenLimitSet sets a mission's token limit (input plus output tokens; 0: none);
	// ErrNotFound: no mission.
	MissionTokenLimitSet(ctx context.Context, id string, tokens int64) error
}

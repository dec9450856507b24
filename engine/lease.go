package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"time"
)

// AcquireRequest asks for the next runnable mission (design brief §3) for one agent.
type AcquireRequest struct {
	AgentID      string               // lease owner: an external agent's id or a managed profile name
	Profile      string               // recorded on the mission (defaults to AgentID)
	Capabilities []string             // what the agent offers
	Personas     []string             // personas the agent may take (nil: any)
	Repository   string               // only this repository ("" = any)
	MissionID    string               // only this mission (the scheduler chose it)
	Kinds        []domain.MissionKind // only these kinds (nil = any)
	// Start acquires and starts in one step (running, not leased): one transaction instead of
	// two when the caller starts the work at once.
	Start bool
	// LeaseTTL overrides the engine's lease TTL for this lease (0: default).
	LeaseTTL time.Duration
	// Leader, when set, makes the acquire conditional on this leader lease being current
	// (ErrNotLeader otherwise): the scheduler loop dispatches only while it leads. The
	// lease.acquired event records it.
	Leader *LeaderFence
	// Node, when set (cluster mode), makes the acquire conditional on this node lease being
	// current (ErrNotLeader otherwise) and records the node on the mission.
	Node *NodeFence
}

// Acquire leases the first runnable mission matching req: a new epoch (the fencing token),
// attempt+1, the lease expiry, and the checkpoint of an interrupted mission handed on. It
// returns ErrPaused while the scheduler is paused and ErrNoWork when nothing is runnable. One
// guarded statement plus its event row, in one transaction; two concurrent acquirers (any
// process) never get the same attempt. The whole mission comes back from the acquiring
// statement itself; only the first start of a voyage, which changes the row again in the same
// transaction (its voyage_active copy), reads it after the commit, from a read snapshot.
func (e *Engine) Acquire(ctx context.Context, req AcquireRequest) (domain.Mission, error) {
	a, err := e.acquire(ctx, req, true)
	if err != nil {
		return domain.Mission{}, err
	}
	if a.Row != nil {
		return *a.Row, nil
	}
	return e.readAcquired(ctx, a)
}

// readAcquired reads the mission of a lease just taken.
func (e *Engine) readAcquired(ctx context.Context, a Acquired) (domain.Mission, error) {
	return viewValue(ctx, e, func(r Reader) (domain.Mission, error) { return r.MissionGet(ctx, a.ID) })
}

// acquireLease is Acquire without reading the mission: the lease as the acquiring statement
// returned it (the claim's hot path).
func (e *Engine) acquireLease(ctx context.Context, req AcquireRequest) (Acquired, error) {
	return e.acquire(ctx, req, false)
}

// acquire takes the lease; row asks the store for the whole mission too (Acquired.Row, nil
// again when this acquire activated the mission's voyage and so changed the row after the
// statement returned it).
func (e *Engine) acquire(ctx context.Context, req AcquireRequest, row bool) (Acquired, error) {
	var a Acquired
	if req.AgentID == "" {
		return a, domain.Invalid("agent_id", "is empty", "name the agent that takes the mission")
	}
	if req.MissionID != "" {
		if err := domain.CheckID("mission_id", domain.PrefixMission, req.MissionID); err != nil {
			return a, err
		}
	}
	ttl := req.LeaseTTL
	if ttl <= 0 {
		ttl = e.opt.LeaseTTL
	}
	profile := req.Profile
	if profile == "" {
		profile = req.AgentID
	}
	var exclude []string
	for {
		var held string
		err := e.update(ctx, req.AgentID, func(o *op) error {
			if err := errors.Join(o.checkLeader(req.Leader), o.checkNode(req.Node)); err != nil {
				return err
			}
			var err error
			a, err = o.tx.MissionAcquire(o.ctx, AcquireQuery{Now: o.now, Owner: req.AgentID, Profile: profile, Node: nodeName(req.Node),
				LeaseTTL: ttl, Start: req.Start, MissionID: req.MissionID, Repository: req.Repository,
				Capabilities: req.Capabilities, Personas: req.Personas, Kinds: req.Kinds, Row: row, Exclude: exclude})
			if errors.Is(err, domain.ErrNoWork) {
				if paused, perr := o.tx.Paused(o.ctx); perr == nil && paused {
					return domain.ErrPaused
				}
				return err
			}
			if err != nil {
				return err
			}
			if held, err = o.pickHeld(a, req); err != nil || held != "" {
				return errors.Join(err, errPickHeld)
			}
			if a.VoyageID != "" && !a.VoyageActive {
				a.Row = nil // activating the voyage rewrites the row's voyage_active copy
			}
			return o.acquired(a, req.Leader, nodeName(req.Node))
		})
		if !errors.Is(err, errPickHeld) || held == "" {
			return a, err
		}
		if exclude = append(exclude, held); len(exclude) > maxHeldPicks {
			return Acquired{}, domain.ErrNoWork
		}
	}
}

// maxHeldPicks bounds how many missions held back by a budget one acquire passes over
// before it answers that there is no work.
const maxHeldPicks = 100

// errPickHeld rolls back an acquire whose pick a budget holds back (pickHeld).
var errPickHeld = errors.New("engine: the picked mission is held back by a budget")

// pickHeld applies VoyageHold (the planner's budget rule) to a mission an untargeted acquire
// (a pull-mode claim) just picked: its id when a budget holds it back, "" otherwise. A
// targeted acquire (req.MissionID: the scheduler's planner chose it, holds applied) is not
// checked again. The hold is logged: the planner records it where get_mission shows it. The
// mission is the row the acquiring statement returned when it returned one (nothing wrote it
// since, in this transaction), else read.
func (o *op) pickHeld(a Acquired, req AcquireRequest) (string, error) {
	if req.MissionID != "" {
		return "", nil
	}
	m, err := o.acquiredRow(a)
	if err != nil {
		return "", err
	}
	r, err := startHold(o.ctx, o.tx, &m)
	if err != nil || r == nil {
		return "", err
	}
	o.e.log.Info("claim passed over a mission a budget holds back", "mission_id", a.ID, "agent", req.AgentID, "why", r.Message)
	return a.ID, nil
}

// acquiredRow is the mission of lease a: a.Row when the acquire returned it, else read in
// this transaction.
func (o *op) acquiredRow(a Acquired) (domain.Mission, error) {
	if a.Row != nil {
		return *a.Row, nil
	}
	return o.tx.MissionGet(o.ctx, a.ID)
}

// acquired records the acquire event (with the leader lease it was made under, if any) and
// activates the mission's voyage on its first start.
// The event has no "from": the mission was pending or interrupted (replay checks that).
func (o *op) acquired(a Acquired, leader *LeaderFence, node string) error {
	data := acquiredData{ExpiresAt: a.Lease.ExpiresAt, Node: node, Owner: a.Lease.Owner, Profile: a.Profile,
		Resumed: a.Resumed, To: a.State}
	var payload any = &data
	if leader != nil {
		payload = &acquiredByLeader{ExpiresAt: data.ExpiresAt, Leader: leader.Owner, LeaderEpoch: leader.Epoch,
			Node: node, Owner: data.Owner, Profile: data.Profile, Resumed: data.Resumed, To: data.To}
	}
	m := domain.Mission{ID: a.ID, VoyageID: a.VoyageID, Attempt: a.Attempt, Lease: a.Lease}
	if err := o.emit("lease.acquired", &m, "", payload); err != nil {
		return err
	}
	o.seen.started = append(o.seen.started, a.Profile)
	if a.VoyageID == "" || a.VoyageActive {
		return nil
	}
	return o.activateVoyage(a.VoyageID)
}

// acquiredData is the lease.acquired event's data. A struct rather than a map: the acquire is
// the hot path, and its fields are in the sorted order a map would have been written in, so
// the stored JSON is the same.
type acquiredData struct {
	ExpiresAt time.Time           `json:"expires_at"`
	Node      string              `json:"node,omitempty"` // the scheduler node (cluster mode)
	Owner     string              `json:"owner"`
	Profile   string              `json:"profile"`
	Resumed   bool                `json:"resumed"`
	To        domain.MissionState `json:"to"`
}

// acquiredByLeader is acquiredData of an acquire made under the scheduler's leader lease.
type acquiredByLeader struct {
	ExpiresAt   time.Time           `json:"expires_at"`
	Leader      string              `json:"leader"`
	LeaderEpoch int64               `json:"leader_epoch"`
	Node        string              `json:"node,omitempty"`
	Owner       string              `json:"owner"`
	Profile     string              `json:"profile"`
	Resumed     bool                `json:"resumed"`
	To          domain.MissionState `json:"to"`
}

func (o *op) activateVoyage(id string) error {
	v, err := o.tx.VoyageGet(o.ctx, id)
	if err != nil || v.State != domain.VoyageOpen {
		return err
	}
	v.State, v.UpdatedAt = domain.VoyageActive, o.now
	// the store moves the voyage's missions ahead of others in the pick order itself
	// (Mission.VoyageActive)
	if err := o.saveVoyage(&v, domain.VoyageOpen, "activate"); err != nil {
		return err
	}
	return o.emit("voyage.activated", nil, id, map[string]any{"to": domain.VoyageActive})
}

// Start moves a leased mission to running (the agent began). Fenced by the epoch.
func (e *Engine) Start(ctx context.Context, f domain.Fence) (domain.Mission, error) {
	var m domain.Mission
	err := e.update(ctx, "", func(o *op) error {
		var err error
		if m, err = o.fenced(f); err != nil {
			return err
		}
		if m.State != domain.StateLeased {
			return &domain.TransitionError{MissionID: m.ID, Op: "start", State: m.State}
		}
		m.StartedAt = o.now
		m.Lease.ExpiresAt = o.now.Add(o.e.opt.LeaseTTL)
		return o.move(&m, domain.StateRunning, "start", "attempt.started", nil)
	})
	return m, err
}

// HeartbeatAnswer tells a live agent how its lease stands.
type HeartbeatAnswer struct {
	State     domain.MissionState `json:"state"`
	Epoch     int64               `json:"epoch"`
	ExpiresAt time.Time           `json:"expires_at"`
	// Yield asks the agent to checkpoint and yield at its next boundary (preemption).
	Yield bool `json:"yield"`
	// Written is false when the heartbeat came within RenewInterval of the last lease write
	// and was answered from a read.
	Written bool `json:"-"`
}

// Heartbeat extends a live lease to now + LeaseTTL and records that the attempt's agent was
// heard from (Mission.Contacted). It writes no event and writes at most once per
// RenewInterval per attempt; sooner heartbeats only verify the lease (unless the last write
// was a server renewal that recorded no contact). A stale epoch returns ErrLeaseLost and
// changes nothing.
func (e *Engine) Heartbeat(ctx context.Context, f domain.Fence) (HeartbeatAnswer, error) {
	return e.renew(ctx, f, true)
}

// renewal is the engine's last lease write for one attempt (RenewInterval).
type renewal struct {
	at      time.Time
	contact bool // the write recorded contact with the agent
}

func (e *Engine) renew(ctx context.Context, f domain.Fence, contact bool) (HeartbeatAnswer, error) {
	now := e.Now()
	e.renewMu.Lock()
	last, ok := e.renewed[f]
	e.renewMu.Unlock()
	if ok && now.Sub(last.at) < e.opt.RenewInterval && (last.contact || !contact) {
		return e.heartbeatRead(ctx, f)
	}
	var m Renewed
	err := e.store.Update(ctx, func(tx Tx) error {
		var err error
		m, err = tx.MissionRenew(ctx, f, now.Add(e.opt.LeaseTTL), contact)
		if errors.Is(err, domain.ErrGuard) {
			return leaseLostFrom(ctx, tx, f)
		}
		return err
	})
	if err != nil {
		if errors.Is(err, domain.ErrLeaseLost) {
			e.forgetRenewal(f)
		}
		return HeartbeatAnswer{}, err
	}
	e.renewMu.Lock()
	e.renewed[f] = renewal{at: now, contact: contact || (ok && last.contact)}
	e.renewMu.Unlock()
	return HeartbeatAnswer{State: m.State, Epoch: m.Epoch, ExpiresAt: m.ExpiresAt, Yield: m.Preempt, Written: true}, nil
}

func (e *Engine) heartbeatRead(ctx context.Context, f domain.Fence) (HeartbeatAnswer, error) {
	var ans HeartbeatAnswer
	err := e.view(ctx, func(r Reader) error {
		l, err := r.MissionLease(ctx, f.MissionID)
		if errors.Is(err, domain.ErrNotFound) {
			return &domain.NotFoundError{Kind: "mission", ID: f.MissionID}
		}
		if err != nil {
			return err
		}
		if l.Epoch != f.Epoch || !l.State.Leased() {
			return &domain.LeaseLostError{MissionID: f.MissionID, Presented: f.Epoch, Current: l.Epoch, State: l.State}
		}
		ans = HeartbeatAnswer{State: l.State, Epoch: l.Epoch, ExpiresAt: l.ExpiresAt, Yield: l.Preempt}
		return nil
	})
	return ans, err
}

// leaseLostFrom explains why a guarded lease write matched nothing.
func leaseLostFrom(ctx context.Context, r Reader, f domain.Fence) error {
	m, err := r.MissionGet(ctx, f.MissionID)
	if errors.Is(err, domain.ErrNotFound) {
		return &domain.NotFoundError{Kind: "mission", ID: f.MissionID}
	}
	if err != nil {
		return err
	}
	return &domain.LeaseLostError{MissionID: m.ID, Presented: f.Epoch, Current: m.Lease.Epoch, State: m.State}
}

// Progress records an agent's progress (percent 0..100, optional; message) and extends the
// lease. Fenced by the epoch.
func (e *Engine) Progress(ctx context.Context, f domain.Fence, percent *float64, message string) error {
	if percent != nil && (*percent < 0 || *percent > 100) {
		return domain.Invalid("percent", fmt.Sprintf("%v is out of range", *percent), "give 0 to 100")
	}
	if len(message) > 4000 {
		return domain.Invalid("message", "is too long", "at most 4000 bytes")
	}
	return e.update(ctx, "", func(o *op) error {
		m, err := o.fenced(f)
		if err != nil {
			return err
		}
		m.Progress = &domain.Progress{Percent: percent, Message: message, At: o.now}
		return o.touch(&m, "mission.progress", map[string]any{"percent": percent, "message": message})
	})
}

// touch writes m with an extended lease and emits an event, without a state change; the
// agent was heard from (Contacted).
func (o *op) touch(m *domain.Mission, eventType string, data map[string]any) error {
	g := Guard{State: m.State, Epoch: m.Lease.Epoch}
	m.Lease.ExpiresAt, m.UpdatedAt, m.Contacted = o.now.Add(o.e.opt.LeaseTTL), o.now, true
	if err := o.save(m, g); err != nil {
		return err
	}
	return o.emit(eventType, m, "", data)
}

// MaxCheckpointBytes bounds a checkpoint.
const MaxCheckpointBytes = 1 << 20

// Checkpoint saves an agent's progress (opaque JSON handed to the next attempt) and stays
// running; it extends the lease. Fenced by the epoch.
func (e *Engine) Checkpoint(ctx context.Context, f domain.Fence, data json.RawMessage, message string) error {
	if err := checkCheckpoint(data); err != nil {
		return err
	}
	return e.update(ctx, "", func(o *op) error {
		m, err := o.fenced(f)
		if err != nil {
			return err
		}
		if m.State != domain.StateRunning {
			return &domain.TransitionError{MissionID: m.ID, Op: "checkpoint", State: m.State}
		}
		m.Checkpoint = data
		return o.touch(&m, "mission.checkpointed", map[string]any{"bytes": len(data), "message": message})
	})
}

func checkCheckpoint(data json.RawMessage) error {
	if len(data) == 0 {
		return nil
	}
	if len(data) > MaxCheckpointBytes {
		return domain.Invalid("checkpoint", fmt.Sprintf("is %d bytes", len(data)), fmt.Sprintf("keep it under %d bytes; store large state in the workspace", MaxCheckpointBytes))
	}
	if !json.Valid(data) {
		return domain.Invalid("checkpoint", "is not valid JSON", "send a JSON value")
	}
	return nil
}

// WaitChildren is the wait reason of a parent that yielded until its child missions complete.
const WaitChildren = "children"

// Yield ends the attempt early with its checkpoint (running → interrupted); the next acquire
// resumes from it ahead of fresh work. waitReason WaitChildren parks the mission until every
// child mission completed. Fenced by the epoch.
func (e *Engine) Yield(ctx context.Context, f domain.Fence, checkpoint json.RawMessage, reason, waitReason string) error {
	if err := checkCheckpoint(checkpoint); err != nil {
		return err
	}
	if waitReason != "" && waitReason != WaitChildren {
		return domain.Invalid("wait", fmt.Sprintf("%q is not a wait reason", domain.Clip(waitReason, 40)), "use children, or nothing")
	}
	err := e.update(ctx, "", func(o *op) error {
		m, err := o.fenced(f)
		if err != nil {
			return err
		}
		if len(checkpoint) > 0 {
			m.Checkpoint = checkpoint
		}
		if waitReason == WaitChildren {
			if done, err := o.childrenDone(m.ID); err != nil {
				return err
			} else if !done {
				m.WaitReason = WaitChildren
			}
		}
		if err := o.endAttempt(&m, domain.OutcomeYielded, nil, nil, reason); err != nil {
			return err
		}
		m.Preempt = false
		m.Lease.Owner, m.Lease.ExpiresAt = "", time.Time{}
		return o.move(&m, domain.StateInterrupted, "yield", "mission.yielded", map[string]any{"reason": reason, "wait": m.WaitReason})
	})
	e.forgetRenewal(f)
	return err
}

// Release gives a leased or running mission back without failing it (no budget spent): it
// becomes pending (or interrupted when it has a checkpoint). Fenced by the epoch.
func (e *Engine) Release(ctx context.Context, f domain.Fence, reason string) error {
	err := e.update(ctx, "", func(o *op) error {
		m, err := o.fenced(f)
		if err != nil {
			return err
		}
		if err := o.endAttempt(&m, domain.OutcomeReleased, nil, nil, reason); err != nil {
			return err
		}
		m.Lease.Owner, m.Lease.ExpiresAt, m.Preempt = "", time.Time{}, false
		to := domain.StatePending
		if m.Checkpoint != nil {
			to = domain.StateInterrupted
		}
		return o.move(&m, to, "release", "lease.released", map[string]any{"reason": reason})
	})
	e.forgetRenewal(f)
	return err
}

// Preempt asks a running mission to checkpoint and yield: its next heartbeat answers
// Yield=true. It changes no state.
func (e *Engine) Preempt(ctx context.Context, missionID, reason, actor string) error {
	if err := domain.CheckID("mission_id", domain.PrefixMission, missionID); err != nil {
		return err
	}
	return e.update(ctx, actor, func(o *op) error {
		m, err := o.get(missionID)
		if err != nil {
			return err
		}
		if m.State != domain.StateRunning {
			return &domain.TransitionError{MissionID: m.ID, Op: "preempt", State: m.State}
		}
		if m.Preempt {
			return nil
		}
		g := Guard{State: m.State, Epoch: m.Lease.Epoch}
		m.Preempt, m.UpdatedAt = true, o.now
		if err := o.save(&m, g); err != nil {
			return err
		}
		return o.emit("mission.preempt_requested", &m, "", map[string]any{"reason": reason})
	})
}

// SetRun stores the scheduler's record of the current attempt (process identity, attempt
// directory) on a leased or running mission and, when ws is not nil, the attempt's workspace
// record (WorkspaceRecord), with an attempt.launched event, in one transaction. Fenced by the
// epoch.
func (e *Engine) SetRun(ctx context.Context, f domain.Fence, run json.RawMessage, ws *Workspace) error {
	if !json.Valid(run) {
		return domain.Invalid("run", "is not valid JSON", "")
	}
	return e.update(ctx, "scheduler", func(o *op) error {
		m, err := o.fenced(f)
		if err != nil {
			return err
		}
		g := Guard{State: m.State, Epoch: m.Lease.Epoch}
		m.Run, m.UpdatedAt = run, o.now
		if err := o.save(&m, g); err != nil {
			return err
		}
		if err := o.putWorkspace(&m, ws); err != nil {
			return err
		}
		return o.emit("attempt.launched", &m, "", launchedData(run, ws))
	})
}

// endAttempt writes the attempt record of m's current attempt (and resets m.Abandons unless
// it ended abandoned).
func (o *op) endAttempt(m *domain.Mission, outcome domain.AttemptOutcome, f *domain.Failure, usage *domain.Usage, summary string) error {
	a := domain.Attempt{MissionID: m.ID, Attempt: m.Attempt, Epoch: m.Lease.Epoch, Agent: m.Lease.Owner,
		Profile: m.Profile, Persona: m.Persona, Outcome: outcome, Failure: f, Summary: domain.Clip(summary, 2000),
		StartedAt: m.StartedAt, EndedAt: o.now}
	if outcome != domain.OutcomeAbandoned {
		m.Abandons = 0 // an attempt that ended any other way breaks the row of abandons
	}
	if usage == nil { // the callers that report none: what the agent spent while running still counts
		run, err := o.closeUsage(m, nil)
		if err != nil {
			return err
		}
		if err := o.addUsage(m, run); err != nil {
			return err
		}
		usage = run
	}
	if usage != nil {
		a.Usage = *usage
	}
	if f != nil {
		a.Signature = Signature(*f)
	}
	if err := o.tx.AttemptInsert(o.ctx, &a); err != nil {
		return err
	}
	o.seen.ended = append(o.seen.ended, a)
	return nil
}

// launchedData is the attempt.launched event's data: the run record with the workspace
// beside it (the event log keeps saying where the attempt worked).
func launchedData(run json.RawMessage, ws *Workspace) any {
	if ws == nil || ws.Path == "" {
		return run
	}
	var data map[string]any
	if err := json.Unmarshal(run, &data); err != nil || data == nil {
		return run // valid JSON that is not an object: recorded as given
	}
	data["workspace"] = ws
	return data
}

// nodeName is the name a node fence speaks for ("" without one).
func nodeName(f *NodeFence) string {
	if f == nil {
		return ""
	}
	return f.Name
}

package domain

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors. Every error the engine returns for a caller's mistake wraps one of these
// (use errors.Is); anything else is a server fault. CallerError tells the two apart.
var (
	// ErrNotFound: no mission, voyage, escalation or attempt has that id.
	ErrNotFound = errors.New("not found")
	// ErrUnknownMission: a dependency or reference names a mission id that does not exist.
	ErrUnknownMission = errors.New("unknown mission")
	// ErrIllegalTransition: the operation is not allowed in the mission's current state.
	ErrIllegalTransition = errors.New("illegal transition")
	// ErrLeaseLost: the caller's epoch is not the mission's current lease. The caller must
	// stop working on it; its result is never landed.
	ErrLeaseLost = errors.New("lease lost")
	// ErrDuplicateID: an id or client key is used twice.
	ErrDuplicateID = errors.New("duplicate id")
	// ErrCycle: the dependencies would form a cycle.
	ErrCycle = errors.New("dependency cycle")
	// ErrInvalid: an argument is malformed or out of range.
	ErrInvalid = errors.New("invalid argument")
	// ErrNoWork: nothing is runnable for this request right now.
	ErrNoWork = errors.New("no runnable mission")
	// ErrPaused: the scheduler is paused; nothing new is acquired.
	ErrPaused = errors.New("scheduler paused")
	// ErrGuard is returned by a Store when a guarded update matched no row (the mission's
	// state or epoch was not what the caller presented). The engine turns it into
	// ErrLeaseLost or ErrIllegalTransition; it never reaches callers of the engine.
	ErrGuard = errors.New("guard mismatch")
	// ErrNotLeader: a scheduler process presented a leader lease (LeaderFence) that is not
	// current any more; it must stop dispatching until it leads again. Not a caller error.
	ErrNotLeader = errors.New("not the scheduler's leader")
	// ErrWorkspaceLost: an attempt's writable workspace was deleted before its work was
	// committed, so there is nothing of it to land; completing it is refused
	// (*WorkspaceLostError). Not a caller error by itself: the pull-mode tools answer it as one.
	ErrWorkspaceLost = errors.New("workspace lost")
	// ErrStoreUnavailable: the database cannot be reached now (a PostgreSQL server that is
	// not up yet at start, or went away mid-run). Nothing is wrong with the call: it may be
	// made again once the database is back (a write whose commit was cut off may or may not
	// have committed; the engine's guards make a repeat safe). Not a caller error: the MCP
	// tools answer it with an isError result saying so, and the scheduler retries.
	ErrStoreUnavailable = errors.New("database unavailable")
)

// CallerError reports whether err is the caller's mistake (a bad id, argument, state or
// epoch) rather than a server fault. MCP tools answer caller errors with isError results and
// server faults with protocol errors (docs/error-handling.md).
func CallerError(err error) bool {
	for _, s := range []error{ErrNotFound, ErrUnknownMission, ErrIllegalTransition, ErrLeaseLost,
		ErrDuplicateID, ErrCycle, ErrInvalid, ErrNoWork, ErrPaused} {
		if errors.Is(err, s) {
			return true
		}
	}
	return false
}

// FieldError is an invalid argument: Field names it (JSON name, dotted for nested fields),
// Problem says what is wrong and Hint what to send instead.
type FieldError struct {
	Field, Problem, Hint string
}

func (e *FieldError) Error() string {
	s := e.Field + ": " + e.Problem
	if e.Hint != "" {
		s += " (" + e.Hint + ")"
	}
	return s
}

// Unwrap makes errors.Is(err, ErrInvalid) true.
func (e *FieldError) Unwrap() error { return ErrInvalid }

func Invalid(field, problem, hint string) error {
	return &FieldError{Field: field, Problem: problem, Hint: hint}
}

// CycleError names the missions of a dependency cycle in order, the first repeated last.
type CycleError struct{ Cycle []string }

func (e *CycleError) Error() string {
	return "dependency cycle: " + strings.Join(e.Cycle, " → ") +
		" (remove one of these hard, soft or serialization edges)"
}

// Unwrap makes errors.Is(err, ErrCycle) true.
func (e *CycleError) Unwrap() error { return ErrCycle }

// TransitionError is an operation attempted in a state that does not allow it.
type TransitionError struct {
	MissionID string
	Op        string
	State     MissionState
}

func (e *TransitionError) Error() string {
	return fmt.Sprintf("mission %s is %s: %s is not allowed in that state (see docs/state-machine.md)",
		e.MissionID, e.State, e.Op)
}

// Unwrap makes errors.Is(err, ErrIllegalTransition) true.
func (e *TransitionError) Unwrap() error { return ErrIllegalTransition }

// LeaseLostError is an ownership operation presented with an epoch that is no longer the
// mission's lease.
type LeaseLostError struct {
	MissionID string
	Presented int64
	Current   int64
	State     MissionState
}

// Error says what happened to the lease and what the holder does now. When the presented
// epoch is still the mission's, the holder's own attempt has ended: a completed one means an
// earlier call already recorded the result (a retried complete_mission), which is nothing to
// worry about; any other state means the attempt was ended by someone else.
func (e *LeaseLostError) Error() string {
	switch {
	case e.Presented == e.Current && e.State == StateCompleted:
		return fmt.Sprintf("lease lost: mission %s already completed at epoch %d, the one you presented: a result for this lease was recorded before (a repeated call?); nothing more to do, read it with get_mission",
			e.MissionID, e.Current)
	case e.Presented == e.Current:
		return fmt.Sprintf("lease lost: the attempt of epoch %d on mission %s has ended (the mission is %s now: a result or failure for this lease was recorded before — a repeated call? — or the lease was released or ran out); stop working on it, nothing more is recorded for it",
			e.Current, e.MissionID, e.State)
	}
	return fmt.Sprintf("lease lost: mission %s is at epoch %d (%s), you presented epoch %d; stop working on it, your result will not be landed",
		e.MissionID, e.Current, e.State, e.Presented)
}

// Unwrap makes errors.Is(err, ErrLeaseLost) true.
func (e *LeaseLostError) Unwrap() error { return ErrLeaseLost }

// NotFoundError names what was not found.
type NotFoundError struct{ Kind, ID string }

func (e *NotFoundError) Error() string {
	where := "list them with list_missions / voyage_status"
	switch e.Kind {
	case "escalation":
		where = "list them with list_escalations"
	case "voyage":
		where = "a mission's voyage_id names its voyage (get_mission)"
	case "node":
		where = "list them with mcp-scheduler nodes"
	}
	if strings.TrimSpace(e.ID) == "" { // "mission  not found" would name nothing
		return fmt.Sprintf("%s_id is empty: give the id of a %s (%s)", e.Kind, e.Kind, where)
	}
	return fmt.Sprintf("%s %s not found (%s)", e.Kind, e.ID, where)
}

// Unwrap makes errors.Is(err, ErrNotFound) true.
func (e *NotFoundError) Unwrap() error { return ErrNotFound }

// WorkspaceLostError refuses the completion of an attempt whose writable workspace was
// deleted before its work was committed (shared/cases B17, for work that finished): there is
// nothing of it to land, and completing would lose the work silently. The attempt should fail
// (failure kind workspace) and the mission run again in a fresh workspace. The rule that
// raises it lives with the workspaces (engine/scheduler/verify.go); this is its one wording.
type WorkspaceLostError struct {
	MissionID string
	Attempt   int
	Path      string // the deleted workspace directory
}

func (e *WorkspaceLostError) Error() string {
	return fmt.Sprintf("workspace lost: %s was deleted before its work was committed", e.Path)
}

// Unwrap makes errors.Is(err, ErrWorkspaceLost) true.
func (e *WorkspaceLostError) Unwrap() error { return ErrWorkspaceLost }

// NothingPushedError refuses the completion of a remote-branch attempt (claim_mission with
// workspace remote_branch) whose branch on the remote is still where it started: the agent
// has not pushed its commits there, so there is nothing to land. Nothing is written and the
// lease is kept: the agent pushes, then completes again.
type NothingPushedError struct {
	MissionID string
	Branch    string
	RemoteURL string
}

func (e *NothingPushedError) Error() string {
	return fmt.Sprintf("nothing was pushed to branch %s on %s: it is still at its start commit, so there is nothing to land", e.Branch, e.RemoteURL)
}

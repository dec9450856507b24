package engine

import (
	"bytes"
	"fmt"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"slices"
)

// MissionFields is a set of a mission's mutable fields: the columns one guarded transition
// writes (Tx.MissionSet). Every transition writes only what it changed, so a lease change
// does not rewrite the brief, and indexes on untouched columns are left alone.
type MissionFields uint64

// The mutable fields of a Mission, one bit each. ID, CreatedAt, VoyageID, ParentID,
// IdempotencyKey, Repository and SubjectID never change after insert and have none.
const (
	FieldKey MissionFields = 1 << iota
	FieldTitle
	FieldBrief
	FieldTargetBranch
	FieldPriority
	FieldKind
	FieldPersona
	FieldCapabilities
	FieldWriteArea
	FieldModelPolicy
	FieldWorkspace
	FieldReview
	FieldAcceptance
	FieldDeadline
	FieldRetryBudget
	FieldCostLimit
	FieldState
	FieldAttempt
	FieldAttemptsUsed
	FieldEpoch
	FieldLeaseOwner
	FieldLeaseExpiresAt
	FieldProfile
	FieldNotBefore
	FieldWaitReason
	FieldPreempt
	FieldSerial
	FieldCheckpoint
	FieldProgress
	FieldResult
	FieldLastFailure
	FieldLastSignature
	FieldDecision
	FieldLanding
	FieldSkipped
	FieldUsage
	FieldEscalationID
	FieldDeadlineEscalated
	FieldRun
	FieldUpdatedAt
	FieldStartedAt
	FieldFinishedAt
	FieldContacted
	FieldAbandons
	FieldNode

	// fieldEnd is one past the last field.
	fieldEnd
)

// AllMissionFields is every mutable field: what a transition writes when it has no copy of
// the row as read to compare with.
const AllMissionFields = fieldEnd - 1

// Has reports whether every field of g is in f.
func (f MissionFields) Has(g MissionFields) bool { return f&g == g }

// MissionChange is one guarded transition of a mission: the fields named in Set take their
// values from Row where the stored row still has From's state and epoch (otherwise the store
// returns ErrGuard and writes nothing). Row.ID names the row.
type MissionChange struct {
	Row  *domain.Mission
	From Guard
	Set  MissionFields
}

// fieldEq compares one field of two missions.
type fieldEq struct {
	f  MissionFields
	eq func(a, b *domain.Mission) bool
}

// missionFieldEqs compares every mutable field. Pointer fields compare by identity: the
// engine replaces a result, failure, decision or progress, it never edits one in place (a
// copy of the row as read shares the old pointer, so an edit in place would go unseen).
var missionFieldEqs = []fieldEq{
	{FieldKey, func(a, b *domain.Mission) bool { return a.Key == b.Key }},
	{FieldTitle, func(a, b *domain.Mission) bool { return a.Title == b.Title }},
	{FieldBrief, func(a, b *domain.Mission) bool { return a.Brief == b.Brief }},
	{FieldTargetBranch, func(a, b *domain.Mission) bool { return a.TargetBranch == b.TargetBranch }},
	{FieldPriority, func(a, b *domain.Mission) bool { return a.Priority == b.Priority }},
	{FieldKind, func(a, b *domain.Mission) bool { return a.Kind == b.Kind }},
	{FieldPersona, func(a, b *domain.Mission) bool { return a.Persona == b.Persona }},
	{FieldCapabilities, func(a, b *domain.Mission) bool { return slices.Equal(a.Capabilities, b.Capabilities) }},
	{FieldWriteArea, func(a, b *domain.Mission) bool {
		return (a.WriteArea == nil) == (b.WriteArea == nil) && slices.Equal(a.WriteArea, b.WriteArea)
	}},
	{FieldModelPolicy, func(a, b *domain.Mission) bool { return modelPolicyEqual(a.ModelPolicy, b.ModelPolicy) }},
	{FieldWorkspace, func(a, b *domain.Mission) bool { return a.Workspace == b.Workspace }},
	{FieldReview, func(a, b *domain.Mission) bool { return a.Review == b.Review }},
	{FieldAcceptance, func(a, b *domain.Mission) bool { return slices.Equal(a.AcceptanceCriteria, b.AcceptanceCriteria) }},
	{FieldDeadline, func(a, b *domain.Mission) bool { return a.Deadline.Equal(b.Deadline) }},
	{FieldRetryBudget, func(a, b *domain.Mission) bool { return a.RetryBudget == b.RetryBudget }},
	{FieldCostLimit, func(a, b *domain.Mission) bool { return a.CostLimitUSD == b.CostLimitUSD }},
	{FieldState, func(a, b *domain.Mission) bool { return a.State == b.State }},
	{FieldAttempt, func(a, b *domain.Mission) bool { return a.Attempt == b.Attempt }},
	{FieldAttemptsUsed, func(a, b *domain.Mission) bool { return a.AttemptsUsed == b.AttemptsUsed }},
	{FieldEpoch, func(a, b *domain.Mission) bool { return a.Lease.Epoch == b.Lease.Epoch }},
	{FieldLeaseOwner, func(a, b *domain.Mission) bool { return a.Lease.Owner == b.Lease.Owner }},
	{FieldLeaseExpiresAt, func(a, b *domain.Mission) bool { return a.Lease.ExpiresAt.Equal(b.Lease.ExpiresAt) }},
	{FieldProfile, func(a, b *domain.Mission) bool { return a.Profile == b.Profile }},
	{FieldNotBefore, func(a, b *domain.Mission) bool { return a.NotBefore.Equal(b.NotBefore) }},
	{FieldWaitReason, func(a, b *domain.Mission) bool { return a.WaitReason == b.WaitReason }},
	{FieldPreempt, func(a, b *domain.Mission) bool { return a.Preempt == b.Preempt }},
	{FieldSerial, func(a, b *domain.Mission) bool { return a.Serial == b.Serial }},
	{FieldCheckpoint, func(a, b *domain.Mission) bool { return rawEqual(a.Checkpoint, b.Checkpoint) }},
	{FieldProgress, func(a, b *domain.Mission) bool { return a.Progress == b.Progress }},
	{FieldResult, func(a, b *domain.Mission) bool { return a.Result == b.Result }},
	{FieldLastFailure, func(a, b *domain.Mission) bool { return a.LastFailure == b.LastFailure }},
	{FieldLastSignature, func(a, b *domain.Mission) bool { return a.LastSignature == b.LastSignature }},
	{FieldDecision, func(a, b *domain.Mission) bool { return a.Decision == b.Decision }},
	{FieldLanding, func(a, b *domain.Mission) bool { return a.Landing == b.Landing }},
	{FieldSkipped, func(a, b *domain.Mission) bool { return a.Skipped == b.Skipped }},
	{FieldUsage, func(a, b *domain.Mission) bool { return a.Usage == b.Usage }},
	{FieldEscalationID, func(a, b *domain.Mission) bool { return a.EscalationID == b.EscalationID }},
	{FieldDeadlineEscalated, func(a, b *domain.Mission) bool { return a.DeadlineEscalated == b.DeadlineEscalated }},
	{FieldRun, func(a, b *domain.Mission) bool { return rawEqual(a.Run, b.Run) }},
	{FieldUpdatedAt, func(a, b *domain.Mission) bool { return a.UpdatedAt.Equal(b.UpdatedAt) }},
	{FieldStartedAt, func(a, b *domain.Mission) bool { return a.StartedAt.Equal(b.StartedAt) }},
	{FieldFinishedAt, func(a, b *domain.Mission) bool { return a.FinishedAt.Equal(b.FinishedAt) }},
	{FieldContacted, func(a, b *domain.Mission) bool { return a.Contacted == b.Contacted }},
	{FieldAbandons, func(a, b *domain.Mission) bool { return a.Abandons == b.Abandons }},
	{FieldNode, func(a, b *domain.Mission) bool { return a.Node == b.Node }},
}

// ChangedFields returns the mutable fields in which now differs from was.
func ChangedFields(was, now *domain.Mission) MissionFields {
	var f MissionFields
	for _, c := range missionFieldEqs {
		if !c.eq(was, now) {
			f |= c.f
		}
	}
	return f
}

// rawEqual compares two JSON texts byte for byte, nil and empty apart (nil is NULL).
func rawEqual(a, b []byte) bool { return (a == nil) == (b == nil) && bytes.Equal(a, b) }

func modelPolicyEqual(a, b domain.ModelPolicy) bool {
	return a.Mode == b.Mode && a.Model == b.Model && slices.Equal(a.Allowed, b.Allowed)
}

// StaleError is a guarded transition that found the mission moved on: another writer changed
// its state or epoch after this operation read it (a lost race, possible on a store with
// concurrent writers). It matches ErrGuard, and ErrLeaseLost when the operation expected a
// lease (leased or running): that lease is no longer the caller's.
type StaleError struct {
	MissionID string
	Expected  Guard
	Err       error
}

func (e *StaleError) Error() string {
	return fmt.Sprintf("mission %s was moved by another writer after it was read (expected %s at epoch %d): read it again (get_mission) and retry if it still applies",
		e.MissionID, e.Expected.State, e.Expected.Epoch)
}

// Unwrap makes errors.Is(err, ErrGuard) true, and errors.Is(err, ErrLeaseLost) when the
// expected state held a lease.
func (e *StaleError) Unwrap() []error {
	errs := []error{domain.ErrGuard}
	if e.Expected.State.Leased() {
		errs = append(errs, domain.ErrLeaseLost)
	}
	if e.Err != nil {
		errs = append(errs, e.Err)
	}
	return errs
}

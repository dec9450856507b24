package engine

import (
	"context"
	"errors"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"time"
)

// Workspace record states.
const (
	WorkspaceActive  = "active"  // the checkout exists (or may: it was made and not removed)
	WorkspaceRemoved = "removed" // cleanup removed the checkout (its branch may remain)
)

// WorkspaceRecord is the durable record of one attempt's workspace (table workspaces, one row
// per mission and attempt): where the attempt worked, on which branch, from which commit.
// It is written in the transaction that records the attempt's launch (SetRun, a pull-mode
// claim's hand-over) and marked removed when cleanup deletes the checkout. The scheduler's
// run record (Mission.Run) does not repeat it.
type WorkspaceRecord struct {
	MissionID string `json:"mission_id"`
	Attempt   int    `json:"attempt"`
	Workspace
	State     string    `json:"state"`
	CreatedAt time.Time `json:"created_at"`
	RemovedAt time.Time `json:"removed_at,omitzero"`
}

// putWorkspace records ws as the workspace of m's current attempt (nothing when ws has no
// path: an attempt that works nowhere, such as a pull-mode claim without a preparer).
func (o *op) putWorkspace(m *domain.Mission, ws *Workspace) error {
	if ws == nil || ws.Path == "" {
		return nil
	}
	return o.tx.WorkspacePut(o.ctx, &WorkspaceRecord{MissionID: m.ID, Attempt: m.Attempt, Workspace: *ws,
		State: WorkspaceActive, CreatedAt: o.now})
}

// Workspace returns the workspace record of a mission's attempt (attempt 0: its latest
// recorded one). ErrNotFound (a *NotFoundError) when none was recorded.
func (e *Engine) Workspace(ctx context.Context, missionID string, attempt int) (WorkspaceRecord, error) {
	if err := domain.CheckID("mission_id", domain.PrefixMission, missionID); err != nil {
		return WorkspaceRecord{}, err
	}
	return viewValue(ctx, e, func(r Reader) (WorkspaceRecord, error) {
		w, err := workspaceIn(ctx, r, missionID, attempt)
		if errors.Is(err, domain.ErrNotFound) {
			return w, &domain.NotFoundError{Kind: "workspace", ID: missionID}
		}
		return w, err
	})
}

func workspaceIn(ctx context.Context, r Reader, missionID string, attempt int) (WorkspaceRecord, error) {
	if attempt > 0 {
		return r.WorkspaceGet(ctx, missionID, attempt)
	}
	ws, err := r.WorkspaceList(ctx, missionID)
	if err != nil {
		return WorkspaceRecord{}, err
	}
	if len(ws) == 0 {
		return WorkspaceRecord{}, domain.ErrNotFound
	}
	return ws[len(ws)-1], nil
}

// WorkspaceRemoved marks the workspace of a mission's attempt removed (cleanup deleted its
// checkout). A workspace that was never recorded is not an error: nothing is written.
func (e *Engine) WorkspaceRemoved(ctx context.Context, missionID string, attempt int) error {
	return e.update(ctx, "cleanup", func(o *op) error {
		err := o.tx.WorkspaceMarkRemoved(o.ctx, missionID, attempt, o.now)
		if errors.Is(err, domain.ErrNotFound) {
			o.e.log.Debug("removed workspace had no record", "mission_id", missionID, "attempt", attempt)
			return nil
		}
		return err
	})
}

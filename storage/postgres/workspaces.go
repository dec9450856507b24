package postgres

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// Workspace rows, as the SQLite backend keeps them (storage/workspaces.go).

const workspaceCols = `mission_id, attempt, path, branch, base_commit, strategy, read_only, resumed, repo_id,
 target_branch, state, created_at, removed_at, notes`

// WorkspacePut records (or, for the same mission and attempt, replaces) a workspace.
func (t *txn) WorkspacePut(ctx context.Context, w *engine.WorkspaceRecord) error {
	_, err := t.q.Exec(ctx, `INSERT INTO workspaces (`+workspaceCols+`)
 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
 ON CONFLICT (mission_id, attempt) DO UPDATE SET path = excluded.path, branch = excluded.branch,
  base_commit = excluded.base_commit, strategy = excluded.strategy, read_only = excluded.read_only,
  resumed = excluded.resumed, repo_id = excluded.repo_id, target_branch = excluded.target_branch,
  state = excluded.state, removed_at = excluded.removed_at, notes = excluded.notes`,
		w.MissionID, w.Attempt, w.Path, w.Branch, w.BaseCommit, w.Strategy, boolInt(w.ReadOnly), boolInt(w.Resumed),
		w.RepoID, w.TargetBranch, w.State, ms0(w.CreatedAt), ms(w.RemovedAt), encodeNotes(w.Notes))
	return translate(err, fmt.Sprintf("record workspace of %s attempt %d", w.MissionID, w.Attempt))
}

// WorkspaceMarkRemoved sets an attempt's workspace removed at at (ErrNotFound when none,
// told from the row count so that the transaction stays usable).
func (t *txn) WorkspaceMarkRemoved(ctx context.Context, missionID string, attempt int, at time.Time) error {
	what := fmt.Sprintf("mark workspace of %s attempt %d removed", missionID, attempt)
	tag, err := t.q.Exec(ctx, `UPDATE workspaces SET state = 'removed', removed_at = $1 WHERE mission_id = $2 AND attempt = $3`,
		ms0(at), missionID, attempt)
	if err != nil {
		return translate(err, what)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("%s: %w", what, domain.ErrNotFound)
	}
	return nil
}

// WorkspaceGet returns the workspace of a mission's attempt (ErrNotFound when none).
func (t *txn) WorkspaceGet(ctx context.Context, missionID string, attempt int) (engine.WorkspaceRecord, error) {
	w, err := scanWorkspace(t.q.QueryRow(ctx, `SELECT `+workspaceCols+` FROM workspaces WHERE mission_id = $1 AND attempt = $2`,
		missionID, attempt))
	return w, translate(err, fmt.Sprintf("workspace of %s attempt %d", missionID, attempt))
}

// WorkspaceList returns a mission's workspaces, by attempt.
func (t *txn) WorkspaceList(ctx context.Context, missionID string) ([]engine.WorkspaceRecord, error) {
	what := "workspaces of " + missionID
	rows, err := t.q.Query(ctx, `SELECT `+workspaceCols+` FROM workspaces WHERE mission_id = $1 ORDER BY attempt`, missionID)
	if err != nil {
		return nil, translate(err, what)
	}
	defer rows.Close()
	var out []engine.WorkspaceRecord
	for rows.Next() {
		w, err := scanWorkspace(rows)
		if err != nil {
			return nil, translate(err, what)
		}
		out = append(out, w)
	}
	return out, translate(rows.Err(), what)
}

func scanWorkspace(r rowScanner) (engine.WorkspaceRecord, error) {
	var w engine.WorkspaceRecord
	var readOnly, resumed int64
	var created, removed sql.NullInt64
	var notes string
	err := r.Scan(&w.MissionID, &w.Attempt, &w.Path, &w.Branch, &w.BaseCommit, &w.Strategy, &readOnly, &resumed,
		&w.RepoID, &w.TargetBranch, &w.State, &created, &removed, &notes)
	w.ReadOnly, w.Resumed, w.CreatedAt, w.RemovedAt = readOnly == 1, resumed == 1, fromMS(created), fromMS(removed)
	if err == nil {
		w.Notes, err = decodeNotes(notes)
	}
	return w, err
}

// encodeNotes stores a workspace's notes as a JSON array ("" when there are none).
func encodeNotes(notes []string) string {
	if len(notes) == 0 {
		return ""
	}
	b, err := json.Marshal(notes)
	if err != nil { // a []string always encodes
		return ""
	}
	return string(b)
}

// decodeNotes reads what encodeNotes stored.
func decodeNotes(s string) ([]string, error) {
	if s == "" {
		return nil, nil
	}
	var notes []string
	if err := json.Unmarshal([]byte(s), &notes); err != nil {
		return nil, fmt.Errorf("workspace notes %q: %w", s, err)
	}
	return notes, nil
}

package storage

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

const workspaceCols = `mission_id, attempt, path, branch, base_commit, strategy, read_only, resumed, repo_id,
 target_branch, state, created_at, removed_at, notes`

func (t *txn) WorkspacePut(ctx context.Context, w *engine.WorkspaceRecord) error {
	_, err := t.q.exec(ctx, `INSERT INTO workspaces (`+workspaceCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
 ON CONFLICT (mission_id, attempt) DO UPDATE SET path = excluded.path, branch = excluded.branch,
  base_commit = excluded.base_commit, strategy = excluded.strategy, read_only = excluded.read_only,
  resumed = excluded.resumed, repo_id = excluded.repo_id, target_branch = excluded.target_branch,
  state = excluded.state, removed_at = excluded.removed_at, notes = excluded.notes`,
		w.MissionID, w.Attempt, w.Path, w.Branch, w.BaseCommit, w.Strategy, boolInt(w.ReadOnly), boolInt(w.Resumed),
		w.RepoID, w.TargetBranch, w.State, ms0(w.CreatedAt), ms(w.RemovedAt), encodeNotes(w.Notes))
	return translate(err, fmt.Sprintf("record workspace of %s attempt %d", w.MissionID, w.Attempt))
}

func (t *txn) WorkspaceMarkRemoved(ctx context.Context, missionID string, attempt int, at time.Time) error {
	what := fmt.Sprintf("mark workspace of %s attempt %d removed", missionID, attempt)
	res, err := t.q.exec(ctx, `UPDATE workspaces SET state = 'removed', removed_at = ? WHERE mission_id = ? AND attempt = ?`,
		ms0(at), missionID, attempt)
	if err != nil {
		return translate(err, what)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if n == 0 {
		return fmt.Errorf("%s: %w", what, domain.ErrNotFound)
	}
	return nil
}

func (t *txn) WorkspaceGet(ctx context.Context, missionID string, attempt int) (engine.WorkspaceRecord, error) {
	w, err := scanWorkspace(t.q.queryRow(ctx, `SELECT `+workspaceCols+` FROM workspaces WHERE mission_id = ? AND attempt = ?`,
		missionID, attempt))
	return w, translate(err, fmt.Sprintf("workspace of %s attempt %d", missionID, attempt))
}

func (t *txn) WorkspaceList(ctx context.Context, missionID string) ([]engine.WorkspaceRecord, error) {
	what := "workspaces of " + missionID
	rows, err := t.q.query(ctx, `SELECT `+workspaceCols+` FROM workspaces WHERE mission_id = ? ORDER BY attempt`, missionID)
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

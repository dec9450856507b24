package storage

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"slices"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

const depCols = `mission_id, depends_on, type, reason, source, created_at`

// DependencyInsert stores d; the same (mission, depends_on, type) twice is ErrDuplicateID.
// One exception: an edge given by a caller replaces a scheduler-made one of the same key (a
// user's conflict edge between two missions whose write areas overlap), so it outlives the
// scheduler's, which is dropped when either mission ends.
func (t *txn) DependencyInsert(ctx context.Context, d domain.Dependency) error {
	what := "insert dependency " + d.MissionID + " → " + d.DependsOn
	res, err := t.q.exec(ctx, `INSERT INTO dependencies (`+depCols+`) VALUES (?, ?, ?, ?, ?, ?)
 ON CONFLICT (mission_id, depends_on, type) DO UPDATE SET reason = excluded.reason, source = excluded.source,
  created_at = excluded.created_at
 WHERE dependencies.source = 'scheduler' AND excluded.source <> 'scheduler'`,
		d.MissionID, d.DependsOn, string(d.Type), d.Reason, d.Source, ms(d.CreatedAt))
	if err != nil {
		return translate(err, what)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	} else if n == 0 {
		return fmt.Errorf("%s: %w: the %s edge exists", what, domain.ErrDuplicateID, d.Type)
	}
	return nil
}

func (t *txn) DependencyDeleteConflicts(ctx context.Context, missionID string) ([]domain.Dependency, error) {
	return t.queryDeps(ctx, "drop conflicts of "+missionID, `DELETE FROM dependencies
 WHERE type = 'conflict' AND source = 'scheduler' AND (mission_id = ?1 OR depends_on = ?1)
 RETURNING `+depCols, missionID)
}

func (t *txn) DependenciesOf(ctx context.Context, missionID string) ([]domain.Dependency, error) {
	return t.queryDeps(ctx, "dependencies of "+missionID,
		`SELECT `+depCols+` FROM dependencies WHERE mission_id = ? ORDER BY depends_on, type`, missionID)
}

func (t *txn) DependentsOf(ctx context.Context, missionID string) ([]domain.Dependency, error) {
	return t.queryDeps(ctx, "dependents of "+missionID,
		`SELECT `+depCols+` FROM dependencies WHERE depends_on = ? ORDER BY mission_id, type`, missionID)
}

func (t *txn) queryDeps(ctx context.Context, what, q string, args ...any) ([]domain.Dependency, error) {
	rows, err := t.q.query(ctx, q, args...)
	if err != nil {
		return nil, translate(err, what)
	}
	defer rows.Close()
	var out []domain.Dependency
	for rows.Next() {
		var d domain.Dependency
		var typ string
		var at sql.NullInt64
		if err := rows.Scan(&d.MissionID, &d.DependsOn, &typ, &d.Reason, &d.Source, &at); err != nil {
			return nil, translate(err, what)
		}
		d.Type, d.CreatedAt = domain.EdgeType(typ), fromMS(at)
		out = append(out, d)
	}
	return out, translate(rows.Err(), what)
}

func (t *txn) WriteAreaSet(ctx context.Context, missionID, repository string, prefixes []string) error {
	if _, err := t.q.exec(ctx, `DELETE FROM write_areas WHERE mission_id = ?`, missionID); err != nil {
		return translate(err, "clear write area of "+missionID)
	}
	for _, p := range prefixes {
		_, err := t.q.exec(ctx, `INSERT OR IGNORE INTO write_areas (mission_id, repository, prefix) VALUES (?, ?, ?)`,
			missionID, repository, p)
		if err != nil {
			return translate(err, "record write area of "+missionID)
		}
	}
	return nil
}

// WriteAreaOverlaps finds missions with a recorded prefix q related to some p in prefixes:
// q is a prefix of p (every prefix of p is looked up on the index) or p is a prefix of q (an
// index range scan).
func (t *txn) WriteAreaOverlaps(ctx context.Context, repository string, prefixes []string) ([]engine.Overlap, error) {
	ids := map[string]bool{}
	for _, p := range prefixes {
		if err := t.overlapIDs(ctx, repository, p, ids); err != nil {
			return nil, err
		}
	}
	var out []engine.Overlap
	for _, id := range slices.Sorted(maps.Keys(ids)) {
		var wa sql.NullString
		err := t.q.queryRow(ctx, `SELECT write_area FROM missions WHERE id = ?`, id).Scan(&wa)
		if err != nil {
			return nil, translate(err, "write area of "+id)
		}
		out = append(out, engine.Overlap{MissionID: id, WriteArea: nullList(wa)})
	}
	return out, nil
}

// sqlWriteAreaOverlap finds the missions of repository ?1 with a recorded prefix among ?2 (a
// JSON list) or in [?3, ?4): two index searches. (An OR of the two made SQLite scan the whole
// repository, so creating n missions took O(n²).)
const sqlWriteAreaOverlap = `SELECT mission_id FROM write_areas
 WHERE repository = ?1 AND prefix IN (SELECT value FROM json_each(?2))
 UNION SELECT mission_id FROM write_areas WHERE repository = ?1 AND prefix >= ?3 AND prefix < ?4`

func (t *txn) overlapIDs(ctx context.Context, repository, p string, ids map[string]bool) error {
	var heads []string // every prefix of p, on rune boundaries, "" and p included
	for i := range p {
		heads = append(heads, p[:i])
	}
	heads = append(heads, p)
	rows, err := t.q.query(ctx, sqlWriteAreaOverlap, repository, jsonText(heads), p, p+"\U0010FFFF")
	if err != nil {
		return translate(err, "write area overlaps")
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return translate(err, "write area overlaps")
		}
		ids[id] = true
	}
	return translate(rows.Err(), "write area overlaps")
}

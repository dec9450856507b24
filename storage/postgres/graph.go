package postgres

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

// sqlDependencyInsert stores an edge; on its key it only replaces a scheduler-made edge with
// one from another source. An edge that exists otherwise matches no row to insert or update:
// ErrDuplicateID without a failed statement, so the transaction stays usable (the engine goes
// on after a duplicate conflict edge).
const sqlDependencyInsert = `INSERT INTO dependencies (` + depCols + `) VALUES ($1, $2, $3, $4, $5, $6)
 ON CONFLICT (mission_id, depends_on, type) DO UPDATE SET reason = excluded.reason, source = excluded.source,
  created_at = excluded.created_at
 WHERE dependencies.source = 'scheduler' AND excluded.source <> 'scheduler'`

// DependencyInsert stores d; the same (mission, depends_on, type) twice is ErrDuplicateID.
// One exception: an edge given by a caller replaces a scheduler-made one of the same key (a
// user's conflict edge between two missions whose write areas overlap), so it outlives the
// scheduler's, which is dropped when either mission ends. A mission that does not exist is
// ErrUnknownMission.
func (t *txn) DependencyInsert(ctx context.Context, d domain.Dependency) error {
	what := "insert dependency " + d.MissionID + " → " + d.DependsOn
	tag, err := t.q.Exec(ctx, sqlDependencyInsert,
		d.MissionID, d.DependsOn, string(d.Type), d.Reason, d.Source, ms(d.CreatedAt))
	if err != nil {
		return translate(err, what)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("%s: %w: the %s edge exists", what, domain.ErrDuplicateID, d.Type)
	}
	return nil
}

// DependencyDeleteConflicts removes the scheduler-made conflict edges touching missionID and
// returns them.
func (t *txn) DependencyDeleteConflicts(ctx context.Context, missionID string) ([]domain.Dependency, error) {
	return t.queryDeps(ctx, "drop conflicts of "+missionID, `DELETE FROM dependencies
 WHERE type = 'conflict' AND source = 'scheduler' AND (mission_id = $1 OR depends_on = $1)
 RETURNING `+depCols, missionID)
}

// DependenciesOf returns the edges from missionID, by depended-on mission and type.
func (t *txn) DependenciesOf(ctx context.Context, missionID string) ([]domain.Dependency, error) {
	return t.queryDeps(ctx, "dependencies of "+missionID,
		`SELECT `+depCols+` FROM dependencies WHERE mission_id = $1 ORDER BY depends_on, type`, missionID)
}

// DependentsOf returns the edges to missionID, by dependent mission and type.
func (t *txn) DependentsOf(ctx context.Context, missionID string) ([]domain.Dependency, error) {
	return t.queryDeps(ctx, "dependents of "+missionID,
		`SELECT `+depCols+` FROM dependencies WHERE depends_on = $1 ORDER BY mission_id, type`, missionID)
}

// queryDeps runs q (returning depCols) and scans every edge; what names it in errors.
func (t *txn) queryDeps(ctx context.Context, what, q string, args ...any) ([]domain.Dependency, error) {
	rows, err := t.q.Query(ctx, q, args...)
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

// WriteAreaSet records missionID's write-area literal prefixes in repository, replacing
// those recorded before (nil: none). A prefix given twice is recorded once (ON CONFLICT DO
// NOTHING, SQLite's INSERT OR IGNORE).
func (t *txn) WriteAreaSet(ctx context.Context, missionID, repository string, prefixes []string) error {
	if _, err := t.q.Exec(ctx, `DELETE FROM write_areas WHERE mission_id = $1`, missionID); err != nil {
		return translate(err, "clear write area of "+missionID)
	}
	if len(prefixes) == 0 {
		return nil
	}
	_, err := t.q.Exec(ctx, `INSERT INTO write_areas (mission_id, repository, prefix)
 SELECT $1, $2, p FROM unnest($3::text[]) AS p ON CONFLICT DO NOTHING`, missionID, repository, prefixes)
	return translate(err, "record write area of "+missionID)
}

// WriteAreaOverlaps finds missions with a recorded prefix q related to some p in prefixes:
// q is a prefix of p (every prefix of p is looked up on the index) or p is a prefix of q (an
// index range scan), and returns each with its write area, by id.
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
		err := t.q.QueryRow(ctx, `SELECT write_area FROM missions WHERE id = $1`, id).Scan(&wa)
		if err != nil {
			return nil, translate(err, "write area of "+id)
		}
		out = append(out, engine.Overlap{MissionID: id, WriteArea: nullList(wa)})
	}
	return out, nil
}

// sqlWriteAreaOverlap finds the missions of repository $1 with a recorded prefix among $2 or
// in [$3, $4): two index searches, as in SQLite. The column's collation is "C" (the schema),
// so the range compares bytes, as SQLite's BINARY, whatever the database's collation, and
// [p, p+U+10FFFF) holds exactly the strings starting with p.
const sqlWriteAreaOverlap = `SELECT mission_id FROM write_areas
 WHERE repository = $1 AND prefix = ANY($2::text[])
 UNION SELECT mission_id FROM write_areas WHERE repository = $1 AND prefix >= $3 AND prefix < $4`

// overlapIDs adds to ids the missions of repository whose recorded prefix is related to p.
func (t *txn) overlapIDs(ctx context.Context, repository, p string, ids map[string]bool) error {
	var heads []string // every prefix of p, on rune boundaries, "" and p included
	for i := range p {
		heads = append(heads, p[:i])
	}
	heads = append(heads, p)
	rows, err := t.q.Query(ctx, sqlWriteAreaOverlap, repository, heads, p, p+"\U0010FFFF")
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

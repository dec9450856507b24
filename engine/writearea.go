package engine

import (
	"fmt"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// literalPrefix is the part of a glob pattern before its first special character.
func literalPrefix(p string) string {
	if i := strings.IndexAny(p, `*?[{\`); i >= 0 {
		return p[:i]
	}
	return p
}

// literalPrefixes returns the distinct literal prefixes of patterns.
func literalPrefixes(patterns []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, p := range patterns {
		lp := literalPrefix(p)
		if !seen[lp] {
			seen[lp] = true
			out = append(out, lp)
		}
	}
	return out
}

// PatternsOverlap decides conservatively whether two write-area patterns could name the same
// file (design brief §4). A literal pattern names a file or a whole directory. Two globs
// overlap when one's literal prefix is a prefix of the other's; a literal and a glob overlap
// unless the glob provably cannot match the literal path or anything under it. When unsure,
// they overlap.
func PatternsOverlap(a, b string) bool {
	la, lb := literalPrefix(a), literalPrefix(b)
	aLit, bLit := la == a, lb == b
	switch {
	case aLit && bLit:
		return a == b || strings.HasPrefix(b, a+"/") || strings.HasPrefix(a, b+"/")
	case aLit:
		return literalMeetsGlob(a, b, lb)
	case bLit:
		return literalMeetsGlob(b, a, la)
	}
	return strings.HasPrefix(la, lb) || strings.HasPrefix(lb, la)
}

func literalMeetsGlob(lit, glob, globPrefix string) bool {
	if ok, err := doublestar.Match(glob, lit); err != nil || ok {
		return true
	}
	if strings.HasPrefix(globPrefix, lit+"/") || globPrefix == lit {
		return true // the glob lives inside the literal directory
	}
	if !strings.HasPrefix(lit, globPrefix) && !strings.HasPrefix(lit+"/", globPrefix) {
		return false // the glob's fixed start rules out the literal and everything under it
	}
	// The glob may match below the literal path only if it can have more segments.
	if strings.Contains(glob, "**") || strings.Contains(glob, "{") {
		return true
	}
	return strings.Count(glob, "/") > strings.Count(lit, "/")
}

// AreasOverlap reports whether any pattern of a overlaps any of b, and names the first pair.
func AreasOverlap(a, b []string) (bool, string) {
	for _, x := range a {
		for _, y := range b {
			if PatternsOverlap(x, y) {
				return true, fmt.Sprintf("write areas overlap: %s ~ %s", x, y)
			}
		}
	}
	return false, ""
}

// attachWriteArea records m's write-area prefixes and adds a scheduler conflict edge (with its
// event) to every non-terminal mission of the same repository whose write area overlaps. A
// mission without a write area is exclusive by flag and gets no edges.
func (o *op) attachWriteArea(m *domain.Mission) error {
	if len(m.WriteArea) == 0 {
		return o.tx.WriteAreaSet(o.ctx, m.ID, m.Repository, nil)
	}
	prefixes := literalPrefixes(m.WriteArea)
	cands, err := o.tx.WriteAreaOverlaps(o.ctx, m.Repository, prefixes)
	if err != nil {
		return err
	}
	if err := o.tx.WriteAreaSet(o.ctx, m.ID, m.Repository, prefixes); err != nil {
		return err
	}
	for _, c := range cands {
		if c.MissionID == m.ID {
			continue
		}
		ok, why := AreasOverlap(m.WriteArea, c.WriteArea)
		if !ok {
			continue
		}
		d := domain.Dependency{MissionID: m.ID, DependsOn: c.MissionID, Type: domain.EdgeConflict, Reason: why,
			Source: domain.SourceScheduler, CreatedAt: o.now}
		if err := o.tx.DependencyInsert(o.ctx, d); err != nil {
			if isDuplicate(err) {
				continue
			}
			return err
		}
		if err := o.emit("conflict.added", m, "", map[string]any{"with": c.MissionID, "reason": why}); err != nil {
			return err
		}
	}
	return nil
}

// detachWriteArea drops m's write-area record and its scheduler-made conflict edges (m became
// terminal).
func (o *op) detachWriteArea(m *domain.Mission) error {
	if len(m.WriteArea) > 0 { // a mission without a write area recorded no prefixes
		if err := o.tx.WriteAreaSet(o.ctx, m.ID, m.Repository, nil); err != nil {
			return err
		}
	}
	dropped, err := o.tx.DependencyDeleteConflicts(o.ctx, m.ID)
	if err != nil {
		return err
	}
	for _, d := range dropped {
		other := d.DependsOn
		if other == m.ID {
			other = d.MissionID
		}
		// source and reason let the voyage graph keep drawing the conflict once it ended
		if err := o.emit("conflict.dropped", m, "", map[string]any{"with": other, "source": d.Source, "reason": d.Reason}); err != nil {
			return err
		}
	}
	return nil
}

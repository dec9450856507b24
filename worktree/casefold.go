package worktree

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"golang.org/x/text/cases"
)

// Case-only collisions (bug case B67): two tracked paths that differ only by case
// (docs/ReadMe.md, docs/readme.md) are one file on a case-insensitive file system (APFS,
// NTFS): every checkout of them shows a change nobody made. git marks such checkouts with
// core.ignorecase=true (set by `git init` and `git clone` where the file system folds case).
// Where it is set, Prepare names the colliding paths to the agent (Workspace.Notes), our
// commit of leftover work never stages a change to them (heldBack), and cleanup reports a
// workspace whose only uncommitted changes are such paths as "case_collision".

// maxCollisionNotes bounds how many colliding groups a note names.
const maxCollisionNotes = 20

// ignoresCase reports whether git treats paths of the checkout at dir case-insensitively
// (core.ignorecase, as git reads it there: every config file, worktree config included).
func (m *Manager) ignoresCase(ctx context.Context, dir string) (bool, error) {
	out, err := m.git.run(ctx, dir, runOpts{readOnly: true}, "config", "--type=bool", "--default=false", "--get", "core.ignorecase")
	if err != nil {
		return false, fmt.Errorf("read core.ignorecase: %w", err)
	}
	return strings.TrimSpace(string(out)) == "true", nil
}

// caseCollisions returns the groups of tracked paths of the checkout at dir (its index) that
// are equal under Unicode case folding, each sorted, the groups sorted by their first path;
// nil when core.ignorecase is not set there (a case-sensitive file system keeps them apart).
func (m *Manager) caseCollisions(ctx context.Context, dir string) ([][]string, error) {
	ignore, err := m.ignoresCase(ctx, dir)
	if err != nil || !ignore {
		return nil, err
	}
	out, err := m.git.run(ctx, dir, runOpts{readOnly: true}, "ls-files", "-z", "--cached")
	if err != nil {
		return nil, fmt.Errorf("list tracked paths: %w", err)
	}
	return foldGroups(splitZ(out)), nil
}

// foldGroups groups paths that are equal under case folding and returns the groups of two or
// more distinct paths.
func foldGroups(paths []string) [][]string {
	fold := cases.Fold()
	byKey := map[string][]string{}
	for _, p := range paths {
		k := fold.String(p)
		if g := byKey[k]; len(g) == 0 || g[len(g)-1] != p { // ls-files repeats unmerged paths
			byKey[k] = append(g, p)
		}
	}
	var groups [][]string
	for _, g := range byKey {
		if len(g) > 1 {
			sort.Strings(g)
			groups = append(groups, g)
		}
	}
	sort.Slice(groups, func(i, j int) bool { return groups[i][0] < groups[j][0] })
	return groups
}

// collisionSet maps every path of groups to the paths it collides with (itself included).
func collisionSet(groups [][]string) map[string][]string {
	set := map[string][]string{}
	for _, g := range groups {
		for _, p := range g {
			set[p] = g
		}
	}
	return set
}

// collisionNotes tells the agent which tracked paths differ only by case and what follows.
func collisionNotes(groups [][]string) []string {
	if len(groups) == 0 {
		return nil
	}
	var names []string
	for i, g := range groups {
		if i == maxCollisionNotes {
			names = append(names, fmt.Sprintf("and %d more groups", len(groups)-i))
			break
		}
		names = append(names, strings.Join(g, " and "))
	}
	return []string{"Tracked paths that differ only by case: " + strings.Join(names, "; ") + ". " +
		"The repository has core.ignorecase set, so on this file system each group may be one file and may " +
		"show as changed although nobody changed it. Leave these paths alone unless the mission is about them; " +
		"a change to them is never committed for you: commit it yourself if you mean it."}
}

// noteShapes adds to ws.Notes what the agent should know about the new checkout's paths: the
// tracked paths that differ only by case, where core.ignorecase is set (logged too).
func (m *Manager) noteShapes(ctx context.Context, ws *Workspace) error {
	groups, err := m.caseCollisions(ctx, ws.Path)
	if err != nil {
		return err
	}
	ws.Notes = append(ws.Notes, collisionNotes(groups)...)
	if len(groups) > 0 {
		m.log.Warn("tracked paths differ only by case and core.ignorecase is set", "mission_id", ws.MissionID,
			"attempt", ws.Attempt, "groups", len(groups), "first", strings.Join(groups[0], ", "))
	}
	return nil
}

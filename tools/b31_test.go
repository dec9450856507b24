package tools

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestB31_HostileIDsAndNamesCreateNothingOnDisk: ids, names and paths taken from tool input
// never become paths: each hostile value is refused with a tool error (never a protocol
// error, never a panic) and nothing appears on disk (bugs.md B31).
func TestB31_HostileIDsAndNamesCreateNothingOnDisk(t *testing.T) {
	b := setup(t, setupOpts{})
	hostile := []string{"../../outside", "/tmp/x", "..", "a/b", strings.Repeat("z", 300), "nul\x00byte"}
	before := tree(t, b.dir)
	repoBefore := tree(t, b.repo)
	for _, h := range hostile {
		for _, c := range []struct {
			tool string
			args map[string]any
		}{
			{"get_mission", map[string]any{"mission_id": h}},
			{"get_mission_log", map[string]any{"mission_id": h}},
			{"get_mission_diff", map[string]any{"mission_id": h}},
			{"cancel_mission", map[string]any{"mission_id": h}},
			{"heartbeat", map[string]any{"mission_id": h, "epoch": 1}},
			{"complete_mission", map[string]any{"mission_id": h, "epoch": 1, "summary": "x"}},
			{"voyage_status", map[string]any{"voyage_id": h}},
			{"resolve_escalation", map[string]any{"escalation_id": h, "action": "retry"}},
			{"claim_mission", map[string]any{"agent_id": h}},
			{"create_mission", map[string]any{"title": "t", "repository": h}},
			{"create_mission", map[string]any{"title": h}},
			{"create_mission", map[string]any{"title": "t", "depends_on": []string{h}}},
			{"create_mission", map[string]any{"title": "t", "write_area": []string{h + "/**"}}},
			{"dispatch", map[string]any{"title": "v", "missions": []any{map[string]any{"key": h, "title": "t"}}}},
		} {
			if c.tool == "create_mission" && c.args["write_area"] != nil && (h == "a/b" || strings.HasPrefix(h, "zzz")) {
				continue // a relative glob such as a/b/** is a legitimate write area
			}
			if c.args["title"] == h && len(h) <= 200 && !strings.Contains(h, "\x00") {
				continue // a title is free text shown to people and never part of a path: "fix a/b" is a fine title
			}
			res := b.call(c.tool, c.args)
			require.True(t, res.IsError, "%s with %q must be refused, got %s", c.tool, h, text(res))
		}
	}
	require.Equal(t, before, tree(t, b.dir), "nothing was created in the data dir")
	require.Equal(t, repoBefore, tree(t, b.repo), "nothing was created in the repository")
	require.Zero(t, ok[StatusResult](b, "status", nil).Total, "no mission was stored")
}

// TestB31_LogPathsStayUnderTheDataDir: a symlinked attempt directory pointing outside is
// not followed.
func TestB31_LogPathsStayUnderTheDataDir(t *testing.T) {
	b := setup(t, setupOpts{})
	m := b.createMission(map[string]any{"title": "x"})
	c := ok[ClaimResult](b, "claim_mission", map[string]any{"agent_id": "w"})
	require.True(t, c.Claimed)
	outside := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(outside, "stdout.ndjson"), []byte("secret\n"), 0o600))
	require.NoError(t, os.MkdirAll(filepath.Join(b.dir, "attempts", m.ID), 0o700))
	require.NoError(t, os.Symlink(outside, filepath.Join(b.dir, "attempts", m.ID, "a1")))
	_, err := b.callErr("get_mission_log", map[string]any{"mission_id": m.ID})
	require.ErrorContains(t, err, "outside")
}

// tree lists every path under dir except the database files, which change as they work.
func tree(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	require.NoError(t, filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if strings.HasPrefix(rel, "db.sqlite") || strings.HasPrefix(rel, ".git") {
			return nil
		}
		out = append(out, rel)
		return nil
	}))
	slices.Sort(out)
	return out
}

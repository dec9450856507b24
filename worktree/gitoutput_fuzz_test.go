package worktree

import (
	"slices"
	"strings"
	"testing"
)

// FuzzGitOutput gives arbitrary bytes, as git's output, to the parsers the package reads git
// with (which selects one): parseStatusZ (`git status --porcelain=v1 -z`), parseWorktreeList
// (`git worktree list --porcelain -z`) and parseMergeTreeConflicts (`git merge-tree
// --write-tree --name-only -z --messages` with conflicts). Properties: no panic (git's output
// is outside input: another git version, a corrupt repository); a status entry has a
// two-letter XY and a path without NUL, and there are no more entries than records; a
// worktree list has one registration per "worktree" record, its values without NUL; the
// conflicting paths are listed once each, none empty, and every message kept starts with
// CONFLICT. The seeds are real outputs of git 2.x (a rename, an untracked file, a locked
// linked worktree, a content conflict).
//
//	go test -run '^$' -fuzz '^FuzzGitOutput$' -fuzztime 10m ./worktree/
func FuzzGitOutput(f *testing.F) {
	f.Add(uint8(0), []byte(" M f.txt\x00R  m.txt\x00n.txt\x00?? untracked.txt\x00"))
	f.Add(uint8(1), []byte("worktree /tmp/gw/r\x00HEAD 19fdf5b1364ec1677db8b1b27df0eb0ca4d6db7e\x00branch refs/heads/main\x00\x00"+
		"worktree /tmp/gw/wt2\x00HEAD 19fdf5b1364ec1677db8b1b27df0eb0ca4d6db7e\x00branch refs/heads/other\x00locked\x00\x00"+
		"worktree /tmp/gw/gone\x00HEAD 19fdf5b1364ec1677db8b1b27df0eb0ca4d6db7e\x00detached\x00prunable gitdir file points to non-existent location\x00\x00"))
	f.Add(uint8(2), []byte("e3b5931d31f72299ba86b30860f11c91c08f44e3\x00f.txt\x00\x001\x00f.txt\x00Auto-merging\x00Auto-merging f.txt\n\x00"+
		"1\x00f.txt\x00CONFLICT (contents)\x00CONFLICT (content): Merge conflict in f.txt\n\x00"))
	f.Fuzz(func(t *testing.T, which uint8, out []byte) {
		records := strings.Split(string(out), "\x00")
		switch which % 3 {
		case 0:
			entries := parseStatusZ(out)
			if len(entries) > len(records) {
				t.Fatalf("%d entries from %d records", len(entries), len(records))
			}
			for _, e := range entries {
				if len(e.xy) != 2 || e.path == "" || strings.Contains(e.path, "\x00") {
					t.Fatalf("entry %+v", e)
				}
			}
		case 1:
			regs := parseWorktreeList(out)
			n := 0
			for _, r := range records {
				if key, _, _ := strings.Cut(r, " "); key == "worktree" {
					n++
				}
			}
			if len(regs) != n {
				t.Fatalf("%d registrations from %d worktree records", len(regs), n)
			}
			for _, r := range regs {
				if strings.Contains(r.Path+r.Head+r.Branch, "\x00") {
					t.Fatalf("registration %+v holds a NUL", r)
				}
			}
		case 2:
			_, conflicts, detail := parseMergeTreeConflicts(out)
			seen := map[string]bool{}
			for _, c := range conflicts {
				if c == "" || seen[c] {
					t.Fatalf("conflicts %q: an empty or repeated path", conflicts)
				}
				seen[c] = true
			}
			if detail != "" && !slices.ContainsFunc(strings.Split(detail, "\n"), func(l string) bool { return strings.HasPrefix(l, "CONFLICT") }) {
				t.Fatalf("detail %q holds no CONFLICT message", detail)
			}
		}
	})
}

package worktree

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Git LFS (docs/workspaces.md, "Git LFS"). A repository whose .gitattributes give paths the
// `lfs` filter commits small pointer files; git-lfs's filter turns them into content on
// checkout (smudge) and content back into pointers on `git add` (clean). What the scheduler
// does with them:
//
//   - git-lfs on the scheduler's PATH: a workspace is made with GIT_LFS_SKIP_SMUDGE=1 (no
//     download, no failure on an object missing locally), then `git lfs checkout` writes the
//     content of every object the local LFS store holds. Objects it lacks stay pointers,
//     and the workspace's notes say so.
//   - git-lfs not on that PATH: every git process runs with the filter off (lfsOffConfig),
//     so the workspace holds the pointers, `git status` sees them unchanged and our commits
//     carry them back byte for byte. The agent gets the same settings through
//     GIT_CONFIG_COUNT (Workspace.GitConfig), and its brief says the files are pointers.

// ErrLFS: a git process failed inside git-lfs (its filter, or a git-lfs command). The error
// is an *LFSError carrying git's *GitError.
var ErrLFS = errors.New("git LFS failed")

// lfsOffConfig turns the LFS filter off for one git process: no clean, smudge or process
// command, and not required, so a path with `filter=lfs` is read and written as it is stored
// (the pointer). Passed to every git process when git-lfs is not on the PATH.
var lfsOffConfig = []string{
	"filter.lfs.process=",
	"filter.lfs.smudge=",
	"filter.lfs.clean=",
	"filter.lfs.required=false",
}

// lfsPointerHeader is how every Git LFS pointer file starts (the spec's first line).
const lfsPointerHeader = "version https://git-lfs.github.com/spec/v1\n"

// maxPointerSize bounds what may be a pointer: git-lfs never writes one larger than 1 KiB.
const maxPointerSize = 1024

// LFSError is a git process that failed inside git-lfs. Its message says what to do and
// keeps git's own words (Git) for the record.
type LFSError struct {
	Git *GitError
	// OnPath says whether git-lfs was on the scheduler's PATH when git ran.
	OnPath bool
}

// Error names Git LFS, the command and what to do, then git's first line.
func (e *LFSError) Error() string {
	hint := "check the object with `git lfs fsck` in the repository, or fetch it with `git lfs fetch`"
	if !e.OnPath {
		hint = "install git-lfs on the scheduler's PATH (Debian: apt-get install git-lfs) and restart it"
	}
	return fmt.Sprintf("%v in `git %s` (in %s): %s; git said: %s", ErrLFS, strings.Join(e.Git.Args, " "), e.Git.Dir, hint, gitVerdict(e.Git.Stderr))
}

// firstLine returns the first non-empty line of s, trimmed.
func firstLine(s string) string {
	for _, line := range strings.Split(s, "\n") {
		if t := strings.TrimSpace(line); t != "" {
			return t
		}
	}
	return ""
}

// gitVerdict is the line of git's message that says what failed: its last "fatal:" line,
// else its first "error:" line, else its first line.
func gitVerdict(stderr string) string {
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.HasPrefix(lines[i], "fatal: ") {
			return strings.TrimSpace(lines[i])
		}
	}
	for _, l := range lines {
		if strings.HasPrefix(l, "error: ") {
			return strings.TrimSpace(l)
		}
	}
	return firstLine(stderr)
}

// Unwrap gives both ErrLFS and git's *GitError to errors.Is and errors.As.
func (e *LFSError) Unwrap() []error { return []error{ErrLFS, e.Git} }

// lfsFailed recognises git's messages for a failed LFS filter or git-lfs command.
func lfsFailed(stderr string) bool {
	for _, s := range []string{"git-lfs filter-process", "filter lfs failed", "filter 'lfs' failed",
		"git-lfs: not found", "git-lfs: command not found", "Smudge error:"} {
		if strings.Contains(stderr, s) {
			return true
		}
	}
	return false
}

// lookPathIn returns the executable name found in the directories of pathList, or "".
func lookPathIn(name, pathList string) string {
	for _, dir := range filepath.SplitList(pathList) {
		if dir == "" {
			continue
		}
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}

// setPath replaces PATH in the environment of every git process and finds git-lfs on it
// again (tests give a PATH without git-lfs this way; the git binary is GitPath).
func (g *gitRunner) setPath(pathList string) {
	env := make([]string, 0, len(g.baseEnv)+1)
	for _, kv := range g.baseEnv {
		if !strings.HasPrefix(kv, "PATH=") {
			env = append(env, kv)
		}
	}
	g.baseEnv = append(env, "PATH="+pathList)
	g.lfs = lookPathIn("git-lfs", pathList)
}

// lfsFill makes the LFS files of a new checkout what the repository's local store can give
// (see the package comment above) and returns what the agent must know, plus the git
// settings its own git needs. store is the LFS store to read ("" = the checkout's own: a
// linked worktree shares the repository's). A failing `git lfs checkout` leaves pointers
// and says so: it never fails the workspace.
func (m *Manager) lfsFill(ctx context.Context, dir, store string) (notes, gitConfig []string, err error) {
	paths, sparse, err := m.lfsPaths(ctx, dir)
	if err != nil || len(paths) == 0 {
		return nil, nil, err
	}
	n := len(paths)
	what := plural(n, "file tracked with Git LFS", "files tracked with Git LFS") + " (" + examples(paths) + ")" + holdPointers(n)
	if m.git.lfs == "" {
		return []string{what + ", not the content: git-lfs is not on the scheduler's PATH. " +
			"Leave such files as they are: they are committed unchanged. A managed agent's git gets the LFS filter off through GIT_CONFIG_COUNT; " +
			"any other git in this workspace needs `-c filter.lfs.process= -c filter.lfs.smudge= -c filter.lfs.clean= -c filter.lfs.required=false`."}, lfsOffConfig, nil
	}
	if on, _ := m.lfsFilterConfigured(ctx, dir); !on {
		return []string{what + ": the repository's git configuration has no LFS filter (`git lfs install` was not run)."}, nil, nil
	}
	if skip := os.Getenv("GIT_LFS_SKIP_SMUDGE"); skip != "" && skip != "0" && skip != "false" {
		return []string{what + ": GIT_LFS_SKIP_SMUDGE is set in the scheduler's environment."}, nil, nil
	}
	if err := m.lfsCheckout(ctx, dir, store, paths, sparse); err != nil {
		m.log.Warn("git lfs checkout failed: the workspace keeps LFS pointers", "path", dir, "err", err)
		return []string{what + ": `git lfs checkout` failed: " + firstLine(stderrOf(err))}, nil, nil
	}
	var left []string
	for _, p := range paths {
		if isLFSPointer(filepath.Join(dir, p)) {
			left = append(left, p)
		}
	}
	if len(left) == 0 {
		return nil, nil, nil
	}
	return []string{fmt.Sprintf("%d of %d files tracked with Git LFS (%s)%s, not the content: "+
		"the repository's local LFS store lacks their objects and the scheduler downloads nothing. Leave such files as they are.",
		len(left), n, examples(left), holdPointers(len(left)))}, nil, nil
}

// lfsPaths lists the paths of dir's index whose attributes name the lfs filter and that are
// checked out; sparse says whether others are not (skip-worktree: outside a sparse checkout).
func (m *Manager) lfsPaths(ctx context.Context, dir string) (paths []string, sparse bool, err error) {
	out, err := m.git.run(ctx, dir, runOpts{readOnly: true}, "ls-files", "-t", "-z", "--", ":(attr:filter=lfs)")
	if err != nil {
		return nil, false, fmt.Errorf("list LFS paths in %s: %w", dir, err)
	}
	for _, rec := range splitZ(out) {
		tag, path, ok := strings.Cut(rec, " ")
		switch {
		case !ok:
		case tag == "S":
			sparse = true
		default:
			paths = append(paths, path)
		}
	}
	return paths, sparse, nil
}

// lfsCheckoutBatch bounds the paths one `git lfs checkout` is given.
const lfsCheckoutBatch = 200

// lfsCheckout runs `git lfs checkout` in dir, reading store when set. In a sparse checkout
// it names the paths checked out (git-lfs 3.3 would write the others too, outside the
// cone), as patterns with their wildcards escaped.
func (m *Manager) lfsCheckout(ctx context.Context, dir, store string, paths []string, sparse bool) error {
	base := []string{"lfs", "checkout"}
	if store != "" {
		base = append([]string{"-c", "lfs.storage=" + store}, base...)
	}
	if !sparse {
		_, err := m.git.run(ctx, dir, runOpts{}, base...)
		return err
	}
	for len(paths) > 0 {
		n := min(len(paths), lfsCheckoutBatch)
		args := append(append([]string(nil), base...), "--")
		for _, p := range paths[:n] {
			args = append(args, escapeWildcards(p))
		}
		if _, err := m.git.run(ctx, dir, runOpts{}, args...); err != nil {
			return err
		}
		paths = paths[n:]
	}
	return nil
}

// escapeWildcards makes a path a pattern that matches only itself.
func escapeWildcards(p string) string {
	var b strings.Builder
	for _, r := range p {
		if strings.ContainsRune(`\*?[`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// lfsFilterConfigured reports whether git's configuration in dir gives the lfs filter a
// smudge or process command.
func (m *Manager) lfsFilterConfigured(ctx context.Context, dir string) (bool, error) {
	out, err := m.git.run(ctx, dir, runOpts{readOnly: true}, "config", "-z", "--get-regexp", `^filter\.lfs\.(process|smudge)$`)
	if exitCode(err) == 1 {
		return false, nil // no such key
	}
	if err != nil {
		return false, err
	}
	for _, rec := range splitZ(out) {
		if _, v, _ := strings.Cut(rec, "\n"); strings.TrimSpace(v) != "" {
			return true, nil
		}
	}
	return false, nil
}

// isLFSPointer reports whether the file at path is a Git LFS pointer (small, starting with
// the spec's version line).
func isLFSPointer(path string) bool {
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > maxPointerSize {
		return false
	}
	b, err := os.ReadFile(path)
	return err == nil && strings.HasPrefix(string(b), lfsPointerHeader)
}

// lfsStore returns the LFS object store of r: lfs.storage when set (relative to the common
// dir), else <common dir>/lfs.
func (m *Manager) lfsStore(ctx context.Context, r *Repo) string {
	out, err := m.git.run(ctx, r.root, runOpts{readOnly: true}, "config", "--get", "lfs.storage")
	if p := strings.TrimSpace(string(out)); err == nil && p != "" {
		if !filepath.IsAbs(p) {
			p = filepath.Join(r.commonDir, p)
		}
		return p
	}
	return filepath.Join(r.commonDir, "lfs")
}

// carryLFSObjects copies the LFS objects of an isolated copy's own store (src, its
// .git/lfs) that the repository's store (dst) lacks, so that what its commits point to is
// there after they land and after the copy is removed. Objects are named by their SHA-256
// and never change: a hard link is enough, a copy where linking fails.
func carryLFSObjects(src, dst string) error {
	root := filepath.Join(src, "objects")
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, "objects", rel)
		if _, err := os.Stat(to); err == nil {
			return nil
		}
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			return err
		}
		if os.Link(p, to) == nil {
			return nil
		}
		return copyFileAtomic(p, to)
	})
	if err != nil {
		return fmt.Errorf("carry LFS objects from %s to %s: %w", src, dst, err)
	}
	return nil
}

// copyFileAtomic copies src to dst through a temporary file in dst's directory.
func copyFileAtomic(src, dst string) error {
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return writeFileAtomic(dst, data)
}

// examples names up to three paths: "a.bin, b.bin, c.bin and 4 more".
func examples(paths []string) string {
	if len(paths) <= 3 {
		return strings.Join(paths, ", ")
	}
	return strings.Join(paths[:3], ", ") + " and " + strconv.Itoa(len(paths)-3) + " more"
}

// holdPointers is " holds its LFS pointer" or " hold their LFS pointers".
func holdPointers(n int) string {
	if n == 1 {
		return " holds its LFS pointer"
	}
	return " hold their LFS pointers"
}

// plural returns "1 one" or "n many".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

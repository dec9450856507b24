package worktree

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// copyIgnored copies the files matching Config.CopyIgnored from the repository's checkout
// into a new workspace. Only paths that git reports as ignored in the workspace are copied
// (`git check-ignore`), so a pattern can never smuggle a tracked or committable file in, and
// existing files are never overwritten. Symbolic links are copied as links.
func (m *Manager) copyIgnored(ctx context.Context, r *Repo, dst string) error {
	if len(m.cfg.CopyIgnored) == 0 {
		return nil
	}
	candidates, err := ignoredCandidates(r.root, dst, m.cfg.CopyIgnored)
	if err != nil || len(candidates) == 0 {
		return err
	}
	in := []byte(strings.Join(candidates, "\x00") + "\x00")
	out, err := m.git.run(ctx, dst, runOpts{readOnly: true, stdin: in}, "check-ignore", "-z", "--stdin")
	if err != nil && exitCode(err) != 1 { // 1: none of them is ignored
		return fmt.Errorf("check ignored files: %w", err)
	}
	for _, rel := range strings.Split(string(bytes.TrimRight(out, "\x00")), "\x00") {
		if rel == "" {
			continue
		}
		if err := copyTree(filepath.Join(r.root, rel), filepath.Join(dst, rel)); err != nil {
			return fmt.Errorf("copy ignored %s: %w", rel, err)
		}
	}
	return nil
}

// ignoredCandidates globs the patterns in the source checkout and keeps paths that are not in
// .git and do not exist in the destination yet.
func ignoredCandidates(src, dst string, patterns []string) ([]string, error) {
	seen := map[string]bool{}
	var out []string
	fsys := os.DirFS(src)
	for _, p := range patterns {
		matches, err := doublestar.Glob(fsys, p, doublestar.WithNoFollow())
		if err != nil {
			return nil, fmt.Errorf("glob %q: %w", p, err)
		}
		for _, rel := range matches {
			if seen[rel] || rel == ".git" || strings.HasPrefix(rel, ".git/") || strings.Contains(rel, "/.git/") {
				continue
			}
			seen[rel] = true
			if _, err := os.Lstat(filepath.Join(dst, rel)); err == nil {
				continue
			}
			out = append(out, rel)
		}
	}
	return out, nil
}

// copyTree copies a file, symbolic link or directory tree, keeping permission bits.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.MkdirAll(target, info.Mode().Perm()|0o700)
		case d.Type()&fs.ModeSymlink != 0:
			link, err := os.Readlink(p)
			if err != nil {
				return err
			}
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				return err
			}
			return os.Symlink(link, target)
		case d.Type().IsRegular():
			return copyFile(p, target, info.Mode().Perm())
		}
		return nil // sockets, devices: skipped
	})
}

func copyFile(src, dst string, perm fs.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

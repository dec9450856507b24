package worktree

import (
	"errors"
	"fmt"
	"io"
	"strings"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// maxLinkTarget bounds how much of a symbolic link's blob is read: a link's text is a path.
const maxLinkTarget = 4096

// escapingLinks returns the symbolic links among paths (the files the attempt changed) in
// commit tip whose target points outside the repository (linkEscapes), sorted as paths are,
// except a link that the candidate target cand already holds identically: a link the
// repository tracks is the person's, not the attempt's.
func (r *Repo) escapingLinks(tip, cand plumbing.Hash, paths []string) ([]EscapingLink, error) {
	var out []EscapingLink
	err := r.read(func(gg *git.Repository) error {
		out = nil
		tipTree, err := treeOf(gg, tip)
		if err != nil {
			return err
		}
		var candTree *object.Tree // read only when a link escapes
		for _, p := range paths {
			e, err := tipTree.FindEntry(p)
			if errors.Is(err, object.ErrEntryNotFound) || errors.Is(err, object.ErrDirectoryNotFound) {
				continue // deleted by the attempt (or the old name of a rename)
			}
			if err != nil {
				return fmt.Errorf("read %s in %s: %w", p, tip, err)
			}
			if e.Mode != filemode.Symlink {
				continue
			}
			target, err := linkText(gg, e.Hash)
			if err != nil {
				return fmt.Errorf("read symbolic link %s: %w", p, err)
			}
			if !linkEscapes(p, target) {
				continue
			}
			if candTree == nil {
				if candTree, err = treeOf(gg, cand); err != nil {
					return err
				}
			}
			if have, err := candTree.FindEntry(p); err == nil && have.Mode == e.Mode && have.Hash == e.Hash {
				continue
			}
			out = append(out, EscapingLink{Path: p, Target: target})
		}
		return nil
	})
	return out, err
}

func treeOf(gg *git.Repository, commit plumbing.Hash) (*object.Tree, error) {
	c, err := gg.CommitObject(commit)
	if err != nil {
		return nil, fmt.Errorf("read commit %s: %w", commit, err)
	}
	t, err := c.Tree()
	if err != nil {
		return nil, fmt.Errorf("read tree of %s: %w", commit, err)
	}
	return t, nil
}

// linkText reads a symbolic link's blob: its target (at most maxLinkTarget bytes).
func linkText(gg *git.Repository, h plumbing.Hash) (string, error) {
	b, err := gg.BlobObject(h)
	if err != nil {
		return "", err
	}
	rd, err := b.Reader()
	if err != nil {
		return "", err
	}
	defer rd.Close()
	data, err := io.ReadAll(io.LimitReader(rd, maxLinkTarget))
	return string(data), err
}

// refuseLinks makes l the refused outcome for links (LandRefused): nothing moves, and the
// detail names every link and its target and says what to do.
func refuseLinks(l *Landing, links []EscapingLink) {
	var b strings.Builder
	b.WriteString("refused: the attempt's branch adds symbolic links that point outside the repository; landed, they would be links into this machine's files:\n")
	for _, k := range links {
		fmt.Fprintf(&b, "- %s\n", k)
	}
	b.WriteString("Remove them from the branch (git rm --cached <path>, then commit) or make them relative links inside the repository; a link the target branch already tracks is accepted.")
	l.Status, l.EscapingLinks, l.Detail = LandRefused, links, b.String()
}

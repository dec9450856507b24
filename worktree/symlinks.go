package worktree

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// Symbolic links (bug case B68): an agent's `ln -s <repo>/node_modules node_modules` is a link
// into the person's machine. It must never be followed by a removal, never be committed by
// our own commit of leftover work, and never land; and a workspace directory that someone
// replaced by a link to another checkout must not be mistaken for the workspace.

// ErrWorkspaceSymlink: a workspace's path (or a directory on the way to it) is now a symbolic
// link, so it names some other directory. Nothing was removed: neither the link nor what it
// points at. Remove the link by hand.
var ErrWorkspaceSymlink = errors.New("workspace path is a symbolic link")

// linkedAway reports whether p, a path this package built from real paths, no longer resolves
// to itself: p itself, or a directory on the way to it, was replaced by a symbolic link. It
// returns what the link says (p's own link) or where p now resolves. A path that does not
// exist is not linked away.
func linkedAway(p string) (string, bool, error) {
	p = filepath.Clean(p)
	if st, err := os.Lstat(p); err == nil && st.Mode()&fs.ModeSymlink != 0 {
		target, err := os.Readlink(p)
		if err != nil {
			return "", false, fmt.Errorf("read link %s: %w", p, err)
		}
		return target, true, nil
	}
	real, err := resolveExisting(p)
	if err != nil {
		return "", false, err
	}
	if real != p {
		return real, true, nil
	}
	return "", false, nil
}

// refuseLinked fails with ErrWorkspaceSymlink when p was replaced by a symbolic link
// (linkedAway), naming both ends.
func refuseLinked(p string) error {
	target, linked, err := linkedAway(p)
	if err != nil {
		return err
	}
	if linked {
		return fmt.Errorf("%w: %s now points to %s; neither is removed (remove the link by hand)", ErrWorkspaceSymlink, p, target)
	}
	return nil
}

// linkEscapes reports whether a symbolic link at rel (slash-separated, relative to the
// repository's top level) whose text is target points outside the repository: an absolute
// target (also a Windows drive or UNC path), or a relative one that climbs above the top
// level. Each link is judged by its own text: a chain through another link of the
// repository is not followed.
func linkEscapes(rel, target string) bool {
	if target == "" {
		return false
	}
	t := strings.ReplaceAll(target, `\`, "/")
	if strings.HasPrefix(t, "/") || (len(t) >= 2 && t[1] == ':' && isLetter(t[0])) {
		return true
	}
	joined := path.Join(path.Dir(rel), t)
	return joined == ".." || strings.HasPrefix(joined, "../")
}

func isLetter(c byte) bool { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') }

// EscapingLink is a symbolic link (mode 120000) whose target points outside the repository.
type EscapingLink struct {
	// Path is the link's path in the repository.
	Path string `json:"path"`
	// Target is what the link says (its target, as git stores it).
	Target string `json:"target"`
}

// String renders "path -> target".
func (l EscapingLink) String() string { return l.Path + " -> " + l.Target }

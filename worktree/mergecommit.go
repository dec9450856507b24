package worktree

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// writeMerge writes the merge commit of tree with parents ours and theirs and returns its id.
// It encodes the commit itself (go-git, no process) into the repository's object database,
// byte for byte the object `git commit-tree -p ours -p theirs -F - tree` would write with the
// runner's identity and the current time in the local time zone; where git would write
// something else (a configuration that changes the object or its file, an identity git would
// clean up, a message that is not UTF-8) it runs `git commit-tree` and logs why at debug.
func (m *Manager) writeMerge(ctx context.Context, r *Repo, tree, ours, theirs, msg string) (string, error) {
	why := r.native.reason(ctx, m, r)
	if why == "" {
		why = verbatimCommit(m.git.author, msg)
	}
	if why == "" {
		h, err := r.writeCommit(m.git.author, time.Now(), plumbing.NewHash(tree),
			[]plumbing.Hash{plumbing.NewHash(ours), plumbing.NewHash(theirs)}, msg)
		if err != nil {
			return "", fmt.Errorf("commit merge: %w", err)
		}
		return h.String(), nil
	}
	m.log.Debug("merge commit written by git commit-tree", "repo", r.root, "reason", why)
	out, err := m.git.run(ctx, r.root, runOpts{stdin: []byte(msg)}, "commit-tree", "--no-gpg-sign",
		"-p", ours, "-p", theirs, "-F", "-", "--end-of-options", tree)
	if err != nil {
		return "", fmt.Errorf("commit merge: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}

// writeCommit encodes a commit with author and committer sig at when and stores it as a loose
// object, made read-only (0444) as git makes its own. It returns the commit's id.
func (r *Repo) writeCommit(sig Signature, when time.Time, tree plumbing.Hash, parents []plumbing.Hash, msg string) (plumbing.Hash, error) {
	who := object.Signature{Name: sig.Name, Email: sig.Email, When: when}
	c := &object.Commit{Author: who, Committer: who, TreeHash: tree, ParentHashes: parents, Message: msg}
	var h plumbing.Hash
	err := r.read(func(gg *git.Repository) error {
		obj := gg.Storer.NewEncodedObject()
		if err := c.Encode(obj); err != nil {
			return err
		}
		var err error
		h, err = gg.Storer.SetEncodedObject(obj)
		return err
	})
	if err != nil {
		return plumbing.ZeroHash, err
	}
	hex := h.String()
	if err := os.Chmod(filepath.Join(r.commonDir, "objects", hex[:2], hex[2:]), 0o444); err != nil && !os.IsNotExist(err) {
		return plumbing.ZeroHash, fmt.Errorf("make object %s read-only: %w", hex, err)
	}
	return h, nil
}

// identCrud are the characters git strips from both ends of an ident's name and email
// (ident.c: crud), so an identity that has them is not written verbatim by commit-tree.
const identCrud = ".,:;<>\"\\'"

// verbatimCommit returns why commit-tree would not write sig and msg as they are ("" when it
// would): an empty or padded name or email (git cleans them up or refuses), or a message that
// is not UTF-8 (git re-encodes it).
func verbatimCommit(sig Signature, msg string) string {
	for _, s := range []string{sig.Name, sig.Email} {
		trimmed := strings.TrimFunc(s, func(c rune) bool { return c <= ' ' || strings.ContainsRune(identCrud, c) })
		if trimmed == "" || trimmed != s {
			return fmt.Sprintf("identity %q is cleaned up by git", s)
		}
	}
	if !utf8.ValidString(msg) {
		return "the message is not UTF-8"
	}
	return ""
}

// commitConfigKeys are the configuration keys (lower case, as `git config` prints them) that
// change the bytes or the file of an object commit-tree writes, with the values that do not.
var commitConfigKeys = map[string][]string{
	"i18n.commitencoding":     {"utf-8", "utf8"},
	"core.sharedrepository":   {"false", "umask", "0", "no", "off"},
	"extensions.objectformat": {"sha1"},
}

// nativeCommits remembers, per repository, whether its configuration lets the merge commit
// be written without git: read with `git config` (which sees every file, include and
// variable git would) at the first merge and again when the repository's config file changes.
type nativeCommits struct {
	mu      sync.Mutex
	checked bool
	mod     time.Time // the repository config's mtime when read
	why     string    // "" when native writes are allowed
}

// reason returns "" when merge commits may be written natively, else why not.
func (n *nativeCommits) reason(ctx context.Context, m *Manager, r *Repo) string {
	var mod time.Time
	if st, err := os.Stat(filepath.Join(r.commonDir, "config")); err == nil {
		mod = st.ModTime()
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.checked && mod.Equal(n.mod) {
		return n.why
	}
	why, err := readCommitConfig(ctx, m, r)
	if err != nil {
		return err.Error() // not cached: asked again at the next merge
	}
	n.checked, n.mod, n.why = true, mod, why
	return why
}

// readCommitConfig asks git for commitConfigKeys and returns why a value rules out native
// writes ("" when none does).
func readCommitConfig(ctx context.Context, m *Manager, r *Repo) (string, error) {
	out, err := m.git.run(ctx, r.root, runOpts{readOnly: true}, "config", "-z", "--get-regexp",
		`^(i18n\.commitencoding|core\.sharedrepository|extensions\.objectformat)$`)
	if exitCode(err) == 1 { // none set
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read the configuration for merge commits: %w", err)
	}
	for _, kv := range splitZ(out) {
		key, value, _ := strings.Cut(kv, "\n")
		ok := commitConfigKeys[strings.ToLower(key)]
		if !containsFold(ok, strings.TrimSpace(value)) {
			return fmt.Sprintf("%s = %s", key, value), nil
		}
	}
	return "", nil
}

func containsFold(list []string, s string) bool {
	for _, v := range list {
		if strings.EqualFold(v, s) {
			return true
		}
	}
	return false
}

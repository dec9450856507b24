package worktree

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
)

// ExcludePattern is the one line Open ensures in the repository's info/exclude (common dir):
// the engine writes briefs to <workspace>/.mcp-scheduler/, which must never be committed.
const ExcludePattern = "/.mcp-scheduler/"

// Repo is an opened repository (non-bare, possibly a linked worktree of another). It is a
// cached handle: Manager.Open returns the same *Repo for the same top level.
type Repo struct {
	id            string
	root          string // real path of the top level of the checkout that was opened
	commonDir     string // real path of the common git dir (shared by all worktrees)
	defaultBranch string // branch checked out at Open; "" when HEAD was detached
	mainRoot      string // real path of the main worktree (first of `git worktree list`)
	pushHookNote  string // why pushes into the checkout are not serialised with landings ("" when they are)

	// go-git is not documented as safe for concurrent use: reads hold ggMu.
	ggMu sync.Mutex
	gg   *git.Repository

	// native says whether merge commits are written without git (writeMerge).
	native nativeCommits
	// replaced says whether replace refs or grafts rule out the merge-base walk.
	replaced replaceRefs

	// remote is the Remote this repository is the clone of; nil for a local repository.
	remote *Remote
}

// ID is a stable short id of the repository: the first 12 hex digits of the SHA-256 of the
// real path of its common git directory. Every linked worktree of one repository has the same
// ID. It names DataDir/worktrees/<id>.
func (r *Repo) ID() string { return r.id }

// Root is the real path of the top level of the checkout that was opened.
func (r *Repo) Root() string { return r.root }

// CommonDir is the real path of the repository's common git directory.
func (r *Repo) CommonDir() string { return r.commonDir }

// PushHookNote says why a person's pushes into this repository's checkout are not serialised
// with landings (docs/workspaces.md, "Pushes into the checkout"); "" when they are.
func (r *Repo) PushHookNote() string { return r.pushHookNote }

// DefaultBranch is the branch that was checked out when the repository was first opened by
// this Manager: the target when a request names none. It fails with ErrDetachedHead when HEAD
// was detached.
func (r *Repo) DefaultBranch() (string, error) {
	if r.defaultBranch == "" {
		return "", fmt.Errorf("repository %s: %w", r.root, ErrDetachedHead)
	}
	return r.defaultBranch, nil
}

// Open opens the repository containing path (a directory inside a checkout or a linked
// worktree), or the remote repository of that name (Config.Remotes). The first call per top
// level runs one `git rev-parse`, opens go-git with EnableDotGitCommonDir, records the
// checked-out branch as DefaultBranch and ensures ExcludePattern in info/exclude; later calls
// return the cached handle. A remote repository is cloned on first use (its DefaultBranch is
// the remote's HEAD); a path inside its clone opens it too. Errors wrap ErrNotRepository for
// paths outside a non-bare repository; a remote that cannot be cloned carries git's
// *GitError.
func (m *Manager) Open(path string) (*Repo, error) {
	if err := m.checkOpen(); err != nil {
		return nil, err
	}
	if rm, ok := m.remotes[path]; ok {
		return m.openRemote(context.Background(), rm)
	}
	if !filepath.IsAbs(path) && remoteNamePattern.MatchString(path) {
		if _, err := os.Lstat(path); errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("open repository %s: %w: no remote repository of that name in this process's "+
				"configuration, which it read when it started: after adding [[repositories]] remote = …, restart serve and daemon", path, ErrNotRepository)
		}
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return nil, fmt.Errorf("open repository %s: %w: %w", path, ErrNotRepository, err)
	}
	if rm, ok := m.remoteOfPath(real); ok {
		return m.openRemote(context.Background(), rm)
	}
	m.mu.Lock()
	r, ok := m.repos[real]
	m.mu.Unlock()
	if ok {
		return r, nil
	}
	r, err = m.openRepo(context.Background(), real)
	if err != nil {
		return nil, fmt.Errorf("open repository %s: %w", path, err)
	}
	m.mu.Lock()
	if cached, ok := m.repos[r.root]; ok {
		m.repos[real] = cached
		m.mu.Unlock()
		return cached, nil
	}
	m.repos[real], m.repos[r.root] = r, r
	m.mu.Unlock()
	m.startFill(r)
	return r, nil
}

func (m *Manager) openRepo(ctx context.Context, dir string) (*Repo, error) {
	out, err := m.git.run(ctx, dir, runOpts{readOnly: true}, "rev-parse", "--path-format=absolute",
		"--is-bare-repository", "--git-common-dir", "--show-toplevel")
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if xe, ok := gitRefusedExtension(dir, stderrOf(err)); ok {
		return nil, xe
	}
	if err != nil || len(lines) < 2 || lines[0] != "false" || len(lines) != 3 {
		return nil, fmt.Errorf("%w (%v)", ErrNotRepository, err)
	}
	commonDir, err := filepath.EvalSymlinks(lines[1])
	if err != nil {
		return nil, fmt.Errorf("resolve common dir: %w", err)
	}
	root, err := filepath.EvalSymlinks(lines[2])
	if err != nil {
		return nil, fmt.Errorf("resolve top level: %w", err)
	}
	gg, err := openGoGit(root, commonDir)
	if xe := (*ExtensionError)(nil); errors.As(err, &xe) {
		return nil, xe
	}
	if err != nil {
		return nil, fmt.Errorf("go-git open %s: %w", root, err)
	}
	sum := sha256.Sum256([]byte(commonDir))
	r := &Repo{id: hex.EncodeToString(sum[:])[:12], root: root, commonDir: commonDir, gg: gg}
	if head, err := gg.Storer.Reference(plumbing.HEAD); err == nil && head.Type() == plumbing.SymbolicReference && head.Target().IsBranch() {
		r.defaultBranch = head.Target().Short()
	}
	regs, err := m.listWorktrees(ctx, r)
	if err != nil {
		return nil, err
	}
	if len(regs) > 0 && !regs[0].Bare {
		if real, err := filepath.EvalSymlinks(regs[0].Path); err == nil {
			r.mainRoot = real
		}
	}
	err = m.withStructure(ctx, r, func() error {
		if err := ensureExclude(commonDir); err != nil {
			return err
		}
		note, err := m.ensurePushHook(ctx, r)
		if err != nil {
			return fmt.Errorf("install the pre-receive hook: %w", err)
		}
		if r.pushHookNote = note; note != "" {
			m.log.Warn(note, "repository", r.root)
		}
		return m.recordRepo(r)
	})
	if err != nil {
		return nil, err
	}
	return r, nil
}

// ensureExclude appends ExcludePattern to <gitDir>/info/exclude when the line is missing.
func ensureExclude(gitDir string) error {
	path := filepath.Join(gitDir, "info", "exclude")
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("read %s: %w", path, err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if strings.TrimSpace(line) == ExcludePattern {
			return nil
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("create %s: %w", filepath.Dir(path), err)
	}
	var add bytes.Buffer
	if len(data) > 0 && !bytes.HasSuffix(data, []byte("\n")) {
		add.WriteByte('\n')
	}
	add.WriteString("# mcp-scheduler: mission briefs, never committed\n" + ExcludePattern + "\n")
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("open %s: %w", path, err)
	}
	if _, err := f.Write(add.Bytes()); err != nil {
		f.Close()
		return fmt.Errorf("append to %s: %w", path, err)
	}
	return f.Close()
}

// repoRecord is DataDir/worktrees/<id>/repo.json: which repository a workspace directory
// belongs to, so cleanup can find repositories without the engine.
type repoRecord struct {
	Root      string `json:"root"`
	CommonDir string `json:"common_dir"`
}

func (m *Manager) recordRepo(r *Repo) error {
	dir := filepath.Join(m.root, r.id)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	data, err := json.Marshal(repoRecord{Root: r.root, CommonDir: r.commonDir})
	if err != nil {
		return err
	}
	return writeFileAtomic(filepath.Join(dir, "repo.json"), data)
}

// KnownRepositories lists the top levels of every repository that has (or had) workspaces in
// this data directory, for `mcp-scheduler cleanup` without arguments. Repositories whose
// directory no longer exists are skipped.
func (m *Manager) KnownRepositories() ([]string, error) {
	entries, err := os.ReadDir(m.root)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", m.root, err)
	}
	var roots []string
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(m.root, e.Name(), "repo.json"))
		if err != nil {
			continue
		}
		var rec repoRecord
		if json.Unmarshal(data, &rec) != nil || rec.Root == "" {
			continue
		}
		if st, err := os.Stat(rec.Root); err == nil && st.IsDir() {
			roots = append(roots, rec.Root)
		}
	}
	return roots, nil
}

// writeFileAtomic writes data to path through a temporary file and a rename.
func writeFileAtomic(path string, data []byte) error { return writeFileAtomicMode(path, data, 0o600) }

// writeFileAtomicMode writes data to path with mode perm through a temporary file in the same
// directory and a rename.
func writeFileAtomicMode(path string, data []byte, perm os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	_, werr := tmp.Write(data)
	cerr := errors.Join(tmp.Chmod(perm), tmp.Close())
	if werr == nil && cerr == nil {
		if err := os.Rename(tmp.Name(), path); err == nil {
			return nil
		} else {
			werr = err
		}
	}
	_ = os.Remove(tmp.Name())
	return fmt.Errorf("write %s: %w", path, errors.Join(werr, cerr))
}

// read runs fn with the go-git repository under ggMu. go-git loads the pack indexes once; when
// the person's git repacks (gc) objects move to new packs and old ones vanish, so a read that
// fails to find an object or a pack file is retried once after re-indexing.
func (r *Repo) read(fn func(gg *git.Repository) error) error {
	r.ggMu.Lock()
	defer r.ggMu.Unlock()
	err := fn(r.gg)
	if err == nil || !(errors.Is(err, plumbing.ErrObjectNotFound) || errors.Is(err, fs.ErrNotExist)) {
		return err
	}
	if ri, ok := r.gg.Storer.(interface{ Reindex() }); ok {
		ri.Reindex()
		return fn(r.gg)
	}
	return err
}

// branchTip returns the commit a local branch points at, wrapping ErrUnknownRef when the
// branch does not exist.
func (r *Repo) branchTip(branch string) (plumbing.Hash, error) {
	var h plumbing.Hash
	err := r.read(func(gg *git.Repository) error {
		ref, err := gg.Reference(plumbing.NewBranchReferenceName(branch), true)
		if err == nil {
			h = ref.Hash()
		}
		return err
	})
	if errors.Is(err, plumbing.ErrReferenceNotFound) {
		return plumbing.ZeroHash, fmt.Errorf("%w: branch %q", ErrUnknownRef, branch)
	}
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("read branch %q: %w", branch, err)
	}
	return h, nil
}

// hasBranch reports whether a local branch exists.
func (r *Repo) hasBranch(branch string) bool {
	_, err := r.branchTip(branch)
	return err == nil
}

// resolveCommit turns a validated revision (local branch name or full/abbreviated commit id)
// into a commit id. A branch of that name wins over an id prefix. Errors wrap ErrInvalidRef or
// ErrUnknownRef.
func (r *Repo) resolveCommit(rev string) (plumbing.Hash, error) {
	if err := ValidateRevision(rev); err != nil {
		return plumbing.ZeroHash, err
	}
	if h, err := r.branchTip(rev); err == nil {
		return h, nil
	}
	if !hexPattern.MatchString(rev) {
		return plumbing.ZeroHash, fmt.Errorf("%w: %q", ErrUnknownRef, rev)
	}
	var h plumbing.Hash
	err := r.read(func(gg *git.Repository) error {
		resolved, err := gg.ResolveRevision(plumbing.Revision(rev))
		if err != nil {
			return err
		}
		if _, err := gg.CommitObject(*resolved); err != nil {
			return err
		}
		h = *resolved
		return nil
	})
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("%w: %q is not a commit: %v", ErrUnknownRef, rev, err)
	}
	return h, nil
}

// commitTime returns a commit's committer time.
func (r *Repo) commitTime(h plumbing.Hash) (time.Time, error) {
	var when time.Time
	err := r.read(func(gg *git.Repository) error {
		c, err := gg.CommitObject(h)
		if err == nil {
			when = c.Committer.When
		}
		return err
	})
	if err != nil {
		return time.Time{}, fmt.Errorf("read commit %s: %w", h, err)
	}
	return when, nil
}

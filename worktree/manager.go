package worktree

import (
	"context"
	"fmt"
	"log/slog"
	"os/exec"
	"path/filepath"
	"sync"
	"time"
)

// Manager owns the workspaces and landings of every repository under one data directory. It
// is safe for concurrent use by many goroutines, and several processes may run a Manager on
// the same data directory at once (they exclude each other with file locks).
type Manager struct {
	cfg      Config
	git      *gitRunner
	locks    *lockTable
	gitLocks *gitLocks
	log      *slog.Logger
	// root is the real path of DataDir/worktrees; every workspace lies under it.
	root string
	// scratch is the real path of DataDir/tmp (temporary checkouts for landing checks).
	scratch string

	// remotes are Config.Remotes by name.
	remotes map[string]Remote

	mu     sync.Mutex
	repos  map[string]*Repo // by real top-level path, and remote repositories by name too
	closed bool

	// background pool refills
	bgCtx    context.Context
	bgCancel context.CancelFunc
	bg       sync.WaitGroup
	filling  map[string]bool
}

// NewManager checks the configuration and that the git CLI is at least 2.38 (once; the error
// wraps ErrGitTooOld otherwise), creates DataDir/worktrees, DataDir/locks and DataDir/tmp
// (mode 0700), and returns a Manager. Call Close when done: it stops warm-pool refills.
func NewManager(cfg Config) (*Manager, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if err := checkGitVersion(cfg.GitPath, cfg.GitTimeout); err != nil {
		return nil, err
	}
	dataDir, err := realDir(cfg.DataDir)
	if err != nil {
		return nil, fmt.Errorf("worktree manager: %w", err)
	}
	cfg.DataDir = dataDir
	dirs := map[string]string{}
	for _, name := range []string{"worktrees", "locks", "tmp"} {
		if dirs[name], err = realDir(filepath.Join(dataDir, name)); err != nil {
			return nil, fmt.Errorf("worktree manager: %w", err)
		}
	}
	bgCtx, bgCancel := context.WithCancel(context.Background())
	m := &Manager{
		cfg:     cfg,
		git:     newGitRunner(cfg.GitPath, cfg.GitTimeout, cfg.Author, cfg.Logger),
		locks:   newLockTable(dirs["locks"]),
		log:     cfg.Logger,
		root:    dirs["worktrees"],
		scratch: dirs["tmp"],
		repos:   make(map[string]*Repo),
		filling: make(map[string]bool),
		remotes: make(map[string]Remote, len(cfg.Remotes)),

		bgCtx:    bgCtx,
		bgCancel: bgCancel,
	}
	for _, rm := range cfg.Remotes {
		m.remotes[rm.Name] = rm
	}
	m.gitLocks = &gitLocks{
		staleAge: cfg.StaleLockAge, wait: cfg.LockWait, now: cfg.Now, log: cfg.Logger,
		holder: lockHolder, mainRoot: m.mainRootOf,
	}
	return m, nil
}

// Config returns the effective configuration (defaults applied, DataDir as a real path).
func (m *Manager) Config() Config { return m.cfg }

// Close stops background warm-pool refills and waits for them. Workspaces stay on disk.
// Calls after Close fail with ErrClosed. Close is idempotent.
func (m *Manager) Close() error {
	m.mu.Lock()
	m.closed = true
	m.mu.Unlock()
	m.bgCancel()
	m.bg.Wait()
	return nil
}

func (m *Manager) checkOpen() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return ErrClosed
	}
	return nil
}

// checkGitVersion runs `git --version` and requires ≥ 2.38.
func checkGitVersion(gitPath string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, gitPath, "--version").Output()
	if err != nil {
		return fmt.Errorf("run %s --version: %w", gitPath, err)
	}
	major, minor, err := gitVersion(string(out))
	if err != nil {
		return err
	}
	if major < 2 || (major == 2 && minor < 38) {
		return fmt.Errorf("%w: found %d.%d", ErrGitTooOld, major, minor)
	}
	return nil
}

// withStructure runs fn while holding the repository's structural lock.
func (m *Manager) withStructure(ctx context.Context, r *Repo, fn func() error) error {
	release, err := m.locks.acquire(ctx, structureKey(r.id))
	if err != nil {
		return err
	}
	defer release()
	return fn()
}

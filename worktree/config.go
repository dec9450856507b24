package worktree

import (
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"time"

	"github.com/bmatcuk/doublestar/v4"
)

// Signature is the author and committer of the commits this package writes (pending work and
// merge commits). Both fields must be non-empty after defaults.
type Signature struct {
	Name  string // "mcp-scheduler" by default
	Email string // "mcp-scheduler@localhost" by default
}

// Config configures a Manager. Zero values take the defaults listed per field (WithDefaults).
type Config struct {
	// DataDir is the scheduler's data directory (required, made absolute). Workspaces live in
	// DataDir/worktrees/<repo id>/<mission id>/a<attempt>, lock files in DataDir/locks.
	DataDir string
	// Author signs the commits of pending work and merge commits.
	// Default: "mcp-scheduler" <mcp-scheduler@localhost>.
	Author Signature
	// CopyIgnored lists doublestar glob patterns, relative to the repository's top level, of
	// git-ignored files copied into every new worktree workspace (".env", "config/*.local.json").
	// Only paths git reports as ignored are copied, so they can never be committed by accident.
	CopyIgnored []string
	// GitTimeout bounds every git process. Default 2 minutes.
	GitTimeout time.Duration
	// Logger receives debug and warning records (snake_case keys). Default: discard.
	Logger *slog.Logger
	// WarmPool is the number of pre-created detached worktrees kept per repository for Prepare
	// to claim; 0 (the default) turns the pool off.
	WarmPool int
	// Retention is how long Cleanup keeps a landed or abandoned workspace after its last
	// activity unless CleanupRequest.OlderThan says otherwise. Default 24 hours.
	Retention time.Duration
	// StaleLockAge is how old (by mtime) a git lock file must be, with no live process holding
	// it open and no live git working in its part of the repository, before it is removed as
	// stale (bug case B16, docs/workspaces.md "Locking"). A landing that finds such a lock in
	// the checkout holding its target, too young but otherwise stale, waits at most this long
	// for it. Default 10 seconds.
	StaleLockAge time.Duration
	// LockWait bounds how long a git command waits for a lock file held by a live process, with
	// backoff from 20 ms to 1 s, before failing with ErrLockBusy. Default 30 seconds.
	LockWait time.Duration
	// Now returns the current time (injected for cleanup ages and lock staleness).
	// Default time.Now.
	Now func() time.Time
	// GitPath is the git binary. Default "git" (looked up in PATH).
	GitPath string
	// Remotes are the repositories named by a git remote URL (Remote): Open takes their Name
	// and works in their clone under DataDir/remotes/<Name>. Names must be unique.
	Remotes []Remote
}

// Defaults used by WithDefaults.
const (
	DefaultGitTimeout   = 2 * time.Minute           // Config.GitTimeout
	DefaultRetention    = 24 * time.Hour            // Config.Retention
	DefaultStaleLockAge = 10 * time.Second          // Config.StaleLockAge
	DefaultLockWait     = 30 * time.Second          // Config.LockWait
	DefaultAuthorName   = "mcp-scheduler"           // Config.Author.Name
	DefaultAuthorEmail  = "mcp-scheduler@localhost" // Config.Author.Email
	// MaxWarmPool caps Config.WarmPool.
	MaxWarmPool = 16
)

// WithDefaults returns a copy of c with every zero field set to its default and DataDir made
// absolute and cleaned.
func (c Config) WithDefaults() Config {
	if c.Author.Name == "" {
		c.Author.Name = DefaultAuthorName
	}
	if c.Author.Email == "" {
		c.Author.Email = DefaultAuthorEmail
	}
	if c.GitTimeout <= 0 {
		c.GitTimeout = DefaultGitTimeout
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Retention <= 0 {
		c.Retention = DefaultRetention
	}
	if c.StaleLockAge <= 0 {
		c.StaleLockAge = DefaultStaleLockAge
	}
	if c.LockWait <= 0 {
		c.LockWait = DefaultLockWait
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.GitPath == "" {
		c.GitPath = "git"
	}
	if c.DataDir != "" {
		if abs, err := filepath.Abs(c.DataDir); err == nil {
			c.DataDir = abs
		}
	}
	return c
}

// validate reports configuration mistakes: a missing data dir, a bad glob, a negative pool,
// control characters in the author.
func (c Config) validate() error {
	if c.DataDir == "" {
		return errors.New("config: DataDir is required")
	}
	if c.WarmPool < 0 || c.WarmPool > MaxWarmPool {
		return fmt.Errorf("config: WarmPool %d outside 0..%d", c.WarmPool, MaxWarmPool)
	}
	for _, p := range c.CopyIgnored {
		if !doublestar.ValidatePattern(p) || filepath.IsAbs(p) || hasDotDot(p) {
			return fmt.Errorf("config: CopyIgnored pattern %q is not a relative glob inside the repository", p)
		}
	}
	seen := map[string]bool{}
	for _, rm := range c.Remotes {
		if err := rm.Validate(); err != nil {
			return fmt.Errorf("config: %w", err)
		}
		if seen[rm.Name] {
			return fmt.Errorf("config: remote repository name %q is used twice", rm.Name)
		}
		seen[rm.Name] = true
	}
	for _, s := range []string{c.Author.Name, c.Author.Email} {
		if hasControl(s) || strings.ContainsAny(s, "<>") {
			return fmt.Errorf("config: author %q contains control characters or angle brackets", s)
		}
	}
	return nil
}

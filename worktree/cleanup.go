package worktree

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
)

// CleanupRequest asks to clean one repository's workspaces.
type CleanupRequest struct {
	// Repo is the repository (required).
	Repo *Repo
	// Keep says which attempts must stay (failed, dirty, unlanded or undecided ones, by the
	// engine's records). When nil, an attempt whose branch tip is in no local branch outside
	// mcp-scheduler/ (unlanded work) is kept.
	Keep func(missionID string, attempt int) bool
	// OlderThan: only workspaces whose last activity (creation or last commit on the branch)
	// is older are removed. Default Config.Retention.
	OlderThan time.Duration
	// RemoveDirty also removes workspaces with uncommitted changes (never by default).
	RemoveDirty bool
	// DrainPool also removes the warm pool's checkouts.
	DrainPool bool
	// DryRun reports what would be done and changes nothing.
	DryRun bool
}

// CleanupEntry is one workspace or branch that Cleanup removed or kept.
type CleanupEntry struct {
	// MissionID and Attempt name the attempt ("" and 0 for a warm-pool checkout).
	MissionID string `json:"mission_id,omitempty"`
	Attempt   int    `json:"attempt,omitempty"`
	// Path is the workspace directory ("" for a branch without a workspace).
	Path string `json:"path,omitempty"`
	// Branch is the attempt's branch ("" for snapshots and pool checkouts).
	Branch string `json:"branch,omitempty"`
	// Reason: for kept entries "keep" (the engine's Keep), "recent", "dirty", "unlanded",
	// "symlink" (the workspace's directory was replaced by a symbolic link: neither the link
	// nor what it points at is touched) or "case_collision" (its only uncommitted changes are
	// paths that differ from another tracked path only by case); for removed ones "expired",
	// "incomplete" (an interrupted creation) or "pool".
	Reason string `json:"reason"`
	// Detail says more for "symlink" and "case_collision": what the link points at, which
	// paths collide, and what to do.
	Detail string `json:"detail,omitempty"`
	// Bytes is the apparent size of the directory (removed entries).
	Bytes int64 `json:"bytes,omitempty"`
}

// CleanupReport says what Cleanup did (or would do, in a dry run).
type CleanupReport struct {
	// Removed lists what was removed (or would be, in a dry run).
	Removed []CleanupEntry `json:"removed,omitempty"`
	// Kept lists what stayed, each with its reason.
	Kept []CleanupEntry `json:"kept,omitempty"`
	// Pruned lists stale registrations (directories deleted by hand) that were pruned.
	Pruned []string `json:"pruned,omitempty"`
	// DiskBytes is the apparent size of the repository's workspace directory afterwards
	// (DataDir/worktrees/<repo id>, warm pool included).
	DiskBytes int64 `json:"disk_bytes"`
	// FreedBytes is the apparent size of what was removed.
	FreedBytes int64 `json:"freed_bytes"`
}

// Cleanup removes expired workspaces and branches of one repository: those the engine does not
// Keep, older than OlderThan, and clean (unless RemoveDirty). It prunes registrations of our
// workspaces whose directories are gone, removes interrupted creations, deletes mission
// branches that lost their workspace under the same rules, and reports the disk used.
// Registrations outside the data directory (the person's own worktrees) are never touched.
func (m *Manager) Cleanup(ctx context.Context, req CleanupRequest) (CleanupReport, error) {
	if err := m.checkOpen(); err != nil {
		return CleanupReport{}, err
	}
	r := req.Repo
	if r == nil {
		return CleanupReport{}, errors.New("cleanup: Repo is required")
	}
	if req.OlderThan <= 0 {
		req.OlderThan = m.cfg.Retention
	}
	c := &cleaner{m: m, r: r, req: req, now: m.cfg.Now()}
	if err := m.withStructure(ctx, r, func() error { return c.run(ctx) }); err != nil {
		return c.rep, fmt.Errorf("cleanup %s: %w", r.root, err)
	}
	c.rep.DiskBytes = dirBytes(filepath.Join(m.root, r.id))
	return c.rep, nil
}

type cleaner struct {
	m   *Manager
	r   *Repo
	req CleanupRequest
	now time.Time
	rep CleanupReport
}

func (c *cleaner) run(ctx context.Context) error {
	regs, err := c.m.listWorktrees(ctx, c.r)
	if err != nil {
		return err
	}
	if err := c.prune(ctx, regs); err != nil {
		return err
	}
	seen, err := c.workspaces(ctx)
	if err != nil {
		return err
	}
	if err := c.orphanBranches(ctx, regs, seen); err != nil {
		return err
	}
	if c.req.DrainPool {
		return c.drainPool(ctx)
	}
	return nil
}

// prune removes registrations inside the data directory whose checkout is gone.
func (c *cleaner) prune(ctx context.Context, regs []registration) error {
	for _, reg := range regs {
		if !reg.Prunable || !isUnder(c.m.cfg.DataDir, reg.Path) {
			continue
		}
		if target, linked, err := linkedAway(reg.Path); err != nil || linked {
			c.m.log.Warn("cleanup leaves a workspace path that is a symbolic link alone", "path", reg.Path, "points_to", target, "err", err)
			continue
		}
		c.rep.Pruned = append(c.rep.Pruned, reg.Path)
		if !c.req.DryRun {
			if err := c.m.discard(ctx, c.r, reg.Path, "", false); err != nil {
				return err
			}
		}
	}
	return nil
}

// workspaces decides about every recorded or leftover workspace; it returns the branches seen.
func (c *cleaner) workspaces(ctx context.Context) (map[string]bool, error) {
	seen := map[string]bool{}
	repoDir := filepath.Join(c.m.root, c.r.id)
	missions, err := os.ReadDir(repoDir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	for _, md := range missions {
		if ValidateMissionID(md.Name()) != nil {
			continue
		}
		if md.Type()&fs.ModeSymlink != 0 {
			if _, err := c.keptLink(CleanupEntry{MissionID: md.Name(), Path: filepath.Join(repoDir, md.Name())}); err != nil {
				return nil, err
			}
			continue
		}
		if !md.IsDir() {
			continue
		}
		for _, attempt := range attemptsIn(filepath.Join(repoDir, md.Name())) {
			path := filepath.Join(repoDir, md.Name(), "a"+strconv.Itoa(attempt))
			seen[AttemptBranch(md.Name(), attempt)] = true
			if err := c.workspace(ctx, md.Name(), attempt, path); err != nil {
				return nil, err
			}
		}
	}
	return seen, nil
}

// attemptsIn lists the attempt numbers that have a directory or a record in a mission dir.
func attemptsIn(dir string) []int {
	entries, _ := os.ReadDir(dir)
	set := map[int]bool{}
	for _, e := range entries {
		name := strings.TrimSuffix(e.Name(), ".json")
		if n, err := strconv.Atoi(strings.TrimPrefix(name, "a")); err == nil && strings.HasPrefix(name, "a") && ValidateAttempt(n) == nil {
			set[n] = true
		}
	}
	var out []int
	for n := range set {
		out = append(out, n)
	}
	sort.Ints(out)
	return out
}

func (c *cleaner) workspace(ctx context.Context, mission string, attempt int, path string) error {
	ws, hasMeta := readMeta(path)
	entry := CleanupEntry{MissionID: mission, Attempt: attempt, Path: path, Branch: ws.Branch}
	if kept, err := c.keptLink(entry); kept || err != nil {
		return err
	}
	if !hasMeta {
		entry.Reason = "incomplete"
		return c.remove(ctx, entry, false)
	}
	if reason := c.keepReason(ctx, mission, attempt, ws.Branch, ws.CreatedAt); reason != "" {
		entry.Reason = reason
		c.rep.Kept = append(c.rep.Kept, entry)
		return nil
	}
	if _, err := gitDirOf(path); err == nil && !c.req.RemoveDirty && ws.Strategy != StrategySnapshot {
		why, err := c.m.uncommittedWork(ctx, path)
		if err != nil {
			return err
		}
		if why.reason != "" {
			entry.Reason, entry.Detail = why.reason, why.detail
			c.rep.Kept = append(c.rep.Kept, entry)
			return nil
		}
	}
	entry.Reason = "expired"
	return c.remove(ctx, entry, true)
}

// keepReason returns why an attempt stays, or "" when it may go.
func (c *cleaner) keepReason(ctx context.Context, mission string, attempt int, branch string, created time.Time) string {
	if c.req.Keep != nil && c.req.Keep(mission, attempt) {
		return "keep"
	}
	last := created
	var tip plumbing.Hash
	if branch != "" {
		if h, err := c.r.branchTip(branch); err == nil {
			tip = h
			if when, err := c.r.commitTime(h); err == nil && when.After(last) {
				last = when
			}
		}
	}
	if c.now.Sub(last) < c.req.OlderThan {
		return "recent"
	}
	if c.req.Keep == nil && !tip.IsZero() && !c.landedSomewhere(ctx, tip) {
		return "unlanded"
	}
	return ""
}

// landedSomewhere reports whether a local branch outside mcp-scheduler/ contains commit.
func (c *cleaner) landedSomewhere(ctx context.Context, commit plumbing.Hash) bool {
	out, err := c.m.git.run(ctx, c.r.root, runOpts{readOnly: true}, "for-each-ref", "--format=%(refname)",
		"--contains", commit.String(), "refs/heads/")
	if err != nil {
		return false
	}
	for _, ref := range strings.Split(string(out), "\n") {
		if ref != "" && !strings.HasPrefix(ref, "refs/heads/"+BranchPrefix) {
			return true
		}
	}
	return false
}

// remove deletes (or, in a dry run, reports) one entry.
func (c *cleaner) remove(ctx context.Context, e CleanupEntry, deleteBranch bool) error {
	if e.Path != "" {
		e.Bytes = dirBytes(e.Path)
	}
	c.rep.Removed = append(c.rep.Removed, e)
	c.rep.FreedBytes += e.Bytes
	if c.req.DryRun {
		return nil
	}
	if e.Path == "" {
		_, err := c.m.git.run(ctx, c.r.root, runOpts{}, "update-ref", "-m", "mcp-scheduler: cleanup", "-d",
			"--end-of-options", "refs/heads/"+e.Branch)
		return err
	}
	return c.m.discard(ctx, c.r, e.Path, e.Branch, deleteBranch)
}

// orphanBranches handles mission branches whose workspace record is gone and that no existing
// checkout holds.
func (c *cleaner) orphanBranches(ctx context.Context, regs []registration, seen map[string]bool) error {
	branches, err := c.r.schedulerBranches()
	if err != nil {
		return err
	}
	holders := map[string]bool{} // branches checked out in a checkout that still exists
	for _, reg := range regs {
		if !reg.Prunable {
			holders[reg.Branch] = true
		}
	}
	for _, b := range branches {
		if seen[b] || holders[b] {
			continue
		}
		mission, attempt, ok := parseAttemptBranch(b)
		if !ok {
			continue
		}
		entry := CleanupEntry{MissionID: mission, Attempt: attempt, Branch: b}
		if reason := c.keepReason(ctx, mission, attempt, b, time.Time{}); reason != "" {
			entry.Reason = reason
			c.rep.Kept = append(c.rep.Kept, entry)
			continue
		}
		entry.Reason = "expired"
		if err := c.remove(ctx, entry, true); err != nil {
			return err
		}
	}
	return nil
}

// parseAttemptBranch splits "mcp-scheduler/<mission>/a<n>".
func parseAttemptBranch(b string) (string, int, bool) {
	rest, ok := strings.CutPrefix(b, BranchPrefix)
	if !ok {
		return "", 0, false
	}
	mission, a, ok := strings.Cut(rest, "/a")
	n, err := strconv.Atoi(a)
	if !ok || err != nil || ValidateMissionID(mission) != nil || ValidateAttempt(n) != nil {
		return "", 0, false
	}
	return mission, n, true
}

// schedulerBranches lists local branches under mcp-scheduler/.
func (r *Repo) schedulerBranches() ([]string, error) {
	var out []string
	err := r.read(func(gg *git.Repository) error {
		out = nil
		iter, err := gg.Branches()
		if err != nil {
			return err
		}
		return iter.ForEach(func(ref *plumbing.Reference) error {
			if name := ref.Name().Short(); strings.HasPrefix(name, BranchPrefix) {
				out = append(out, name)
			}
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("list branches: %w", err)
	}
	return out, nil
}

func (c *cleaner) drainPool(ctx context.Context) error {
	entries, _ := os.ReadDir(c.m.poolDir(c.r))
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		p := filepath.Join(c.m.poolDir(c.r), e.Name())
		if err := c.remove(ctx, CleanupEntry{Path: p, Reason: "pool"}, false); err != nil {
			return err
		}
		if !c.req.DryRun {
			_ = os.Remove(readyMark(p))
		}
	}
	return nil
}

// isUnder reports whether p lies inside root (both real paths).
func isUnder(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../") && !filepath.IsAbs(rel)
}

// dirBytes sums the apparent sizes of the regular files under dir.
func dirBytes(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}

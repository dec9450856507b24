package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"time"

	"github.com/mcp-scheduler/mcp-scheduler/worktree"
)

// prepareCheckTimeout bounds the doctor's throwaway workspace in one repository (a checkout
// of a large repository takes a while on a loaded machine).
const prepareCheckTimeout = 5 * time.Minute

// dryRun makes the doctor's throwaway workspaces: a workspace manager on the data dir, as the
// scheduler loop makes one (openLoop), without a warm pool.
type dryRun struct {
	mgr *worktree.Manager
	err error
}

func (a *app) newDryRun() *dryRun {
	var copyIgnored []string
	for _, r := range a.cfg.Repositories {
		copyIgnored = append(copyIgnored, r.CopyIgnored...)
	}
	slices.Sort(copyIgnored)
	mgr, err := worktree.NewManager(worktree.Config{DataDir: a.cfg.DataDir,
		Author:      worktree.Signature{Name: a.cfg.Git.AuthorName, Email: a.cfg.Git.AuthorEmail},
		CopyIgnored: slices.Compact(copyIgnored), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	return &dryRun{mgr: mgr, err: err}
}

func (d *dryRun) close() {
	if d.mgr != nil {
		_ = d.mgr.Close()
	}
}

// prepare makes and removes a throwaway workspace in the repository at top, as a mission's
// first dispatch would make its workspace (worktree.Manager.CheckPrepare), and says so for the
// repository's row: ok is false when a mission could not get one; warn when it could only by
// naming a target branch.
func (d *dryRun) prepare(ctx context.Context, top string) (detail string, ok, warn bool) {
	if d.err != nil {
		return fmt.Sprintf("git checkout at %s, but no workspace could be tried (%v): see the data dir's row", top, d.err), false, false
	}
	ctx, cancel := context.WithTimeout(ctx, prepareCheckTimeout)
	defer cancel()
	start := time.Now()
	pc, err := d.mgr.CheckPrepare(ctx, top)
	took := time.Since(start).Round(10 * time.Millisecond)
	var xe *worktree.ExtensionError
	switch {
	case errors.As(err, &xe): // says what to do itself
		return fmt.Sprintf("git checkout at %s, but missions cannot get a workspace there: %v", top, xe), false, false
	case errors.Is(err, worktree.ErrUnknownRef) && pc.Branch != "":
		return fmt.Sprintf("git checkout at %s, but missions cannot get a workspace there: %v; commit something on %s first (workspaces start from its tip)",
			top, err, pc.Branch), false, false
	case err != nil:
		return fmt.Sprintf("git checkout at %s, but missions cannot get a workspace there (each would fail at its first dispatch): %v; "+
			"fix what git says, then run mcp-scheduler doctor again", top, err), false, false
	case pc.Branch == "":
		return fmt.Sprintf("git checkout at %s with HEAD detached: missions there must name a target branch (a snapshot of HEAD was made and removed in %v)",
			pc.Root, took), true, true
	}
	detail = fmt.Sprintf("git checkout at %s: a workspace on %s (%.12s) was made and removed in %v", pc.Root, pc.Branch, pc.Commit, took)
	if pc.PushHookNote != "" {
		return detail + "; " + pc.PushHookNote, true, true
	}
	return detail, true, false
}

// defaultRepositoryCheck is the default repository's row: its top level, and, unless a
// [[repositories]] row already tried it, that a mission can get a workspace there.
func (a *app) defaultRepositoryCheck(ctx context.Context, dry *dryRun) check {
	c := check{Name: "default repository", OK: true, Detail: a.repos.defaultRepo}
	for _, rc := range a.cfg.Repositories {
		if rc.Remote != "" {
			continue
		}
		if top, err := gitTopLevel(ctx, rc.Path); err == nil && top == a.repos.defaultRepo {
			return c
		}
	}
	c.Detail, c.OK, c.Warn = dry.prepare(ctx, a.repos.defaultRepo)
	return c
}

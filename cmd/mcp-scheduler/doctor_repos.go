package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
)

// repoPathError is a configured repository path that is not a git checkout: it stops every
// command that opens the store (newRepositories), and doctor reports it on the repository's
// own row instead of the database's.
type repoPathError struct {
	index int
	path  string
	err   error
}

func (e *repoPathError) Error() string {
	return fmt.Sprintf("repositories[%d].path: %s: %v", e.index, e.path, e.err)
}

func (e *repoPathError) Unwrap() error { return e.err }

// repositoryChecks gives one row per configured repository path: its checkout's top level and
// that a mission can get a workspace there (a throwaway one was made and removed, dryRun), or
// what is wrong with the path or the repository and what to do about it. (Remote repositories
// have remoteChecks.)
func (a *app) repositoryChecks(ctx context.Context, dry *dryRun) []check {
	where := "the configuration file"
	if a.cfg.path != "" {
		where = a.cfg.path
	}
	var out []check
	for _, rc := range a.cfg.Repositories {
		if rc.Remote != "" {
			continue
		}
		c := check{Name: "repository " + rc.Path}
		top, err := gitTopLevel(ctx, rc.Path)
		switch {
		case err == nil:
			c.Detail, c.OK, c.Warn = dry.prepare(ctx, top)
		case errors.Is(err, fs.ErrNotExist):
			c.Detail = fmt.Sprintf("%s does not exist: clone or create the repository there, or correct or remove its [[repositories]] path in %s", rc.Path, where)
		default:
			if st, serr := os.Stat(rc.Path); serr == nil && !st.IsDir() {
				c.Detail = fmt.Sprintf("%s is a file, not a directory: point its [[repositories]] path in %s at a git checkout", rc.Path, where)
				break
			}
			if strings.Contains(err.Error(), "extension found") || strings.Contains(err.Error(), "extensions found") {
				c.Detail = fmt.Sprintf("git refuses the repository at %s (%v): it uses an extension this git does not know; run mcp-scheduler with the git that made it, or remove the extension from the repository's .git/config (git config -f <git dir>/config --unset extensions.<name>)", rc.Path, err)
				break
			}
			c.Detail = fmt.Sprintf("%s is not a git checkout (%v): run git init there, or point its [[repositories]] path in %s at a checkout", rc.Path, err, where)
		}
		out = append(out, c)
	}
	return out
}

// storeCheck opens and closes the store alone: the database's row when the repositories
// stopped a.open before it reached the store.
func (a *app) storeCheck(ctx context.Context) error {
	st, err := a.openStore(ctx)
	if err != nil {
		return err
	}
	return st.Close()
}

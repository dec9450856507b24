package main

import (
	"fmt"

	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/worktree"
)

// remoteName is what missions call a repository named by a git remote: its name, or the one
// worktree.RemoteName derives from the URL (the last element of its path without ".git").
func (r RepositoryConfig) remoteName() string {
	if r.Name != "" {
		return r.Name
	}
	return worktree.RemoteName(r.Remote)
}

// validateRemote checks a [[repositories]] entry named by a git remote: no path beside it, a
// name (given or derived) that is valid and not used twice, a URL git may reach.
func (r RepositoryConfig) validateRemote(key string, seen map[string]bool) []error {
	var errs []error
	if r.Path != "" {
		errs = append(errs, fmt.Errorf("%s: path and remote are both set: give path for a checkout on this machine or remote for a repository named by a git remote, not both", key))
	}
	if r.Remote == "" {
		return append(errs, fmt.Errorf("%s.name: %q is set without remote: name is for repositories named by a git remote (remote = \"URL\")", key, r.Name))
	}
	name := r.remoteName()
	if name == "" {
		return append(errs, fmt.Errorf("%s.remote: no name can be derived from %q: give name = \"...\"", key, r.Remote))
	}
	if err := domain.CheckName(key+".name", "repository names", name); err != nil {
		errs = append(errs, err)
	} else if err := (worktree.Remote{Name: name, URL: r.Remote}).Validate(); err != nil {
		errs = append(errs, fmt.Errorf("%s: %w", key, err))
	}
	if seen[name] {
		errs = append(errs, fmt.Errorf("%s.name: %q names two repositories: give each remote its own name = \"...\"", key, name))
	}
	seen[name] = true
	return errs
}

// remotes are the configured repositories named by a git remote, for the workspace manager.
func (c *Config) remotes() []worktree.Remote {
	var out []worktree.Remote
	for _, r := range c.Repositories {
		if r.Remote != "" {
			out = append(out, worktree.Remote{Name: r.remoteName(), URL: r.Remote})
		}
	}
	return out
}

// isRemoteRepository says whether name is the name of a configured remote repository.
func (c *Config) isRemoteRepository(name string) bool {
	for _, r := range c.remotes() {
		if r.Name == name {
			return true
		}
	}
	return false
}

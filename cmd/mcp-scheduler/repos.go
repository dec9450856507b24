package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// repositories decides which repositories missions may name: the configured ones and the
// default, which is the git top level of the server's working directory (MCP clients start
// stdio servers in the project's directory).
type repositories struct {
	defaultRepo string          // "" when the working directory is not in a repository
	allowed     map[string]bool // canonical top levels
	remotes     map[string]bool // names of the repositories named by a git remote
	configPath  string
}

// newRepositories canonicalises the configured repositories (each must be a git checkout, or
// a git remote known by its name) and finds the default from dir.
func newRepositories(ctx context.Context, c *Config, dir string) (*repositories, error) {
	r := &repositories{allowed: map[string]bool{}, remotes: map[string]bool{}, configPath: c.path}
	for i, rc := range c.Repositories {
		if rc.Remote != "" {
			r.remotes[rc.remoteName()] = true
			continue
		}
		top, err := gitTopLevel(ctx, rc.Path)
		if err != nil {
			return nil, &repoPathError{index: i, path: rc.Path, err: err}
		}
		r.allowed[top] = true
	}
	if top, err := gitTopLevel(ctx, dir); err == nil {
		r.defaultRepo = top
		r.allowed[top] = true
	}
	return r, nil
}

// resolve is engine.Options.ResolveRepository: an absolute path inside a configured (or the
// default) repository becomes that repository's canonical top level, and the name of a
// repository named by a git remote stays that name; anything else is refused with a message
// saying how to allow it.
func (r *repositories) resolve(path string) (string, error) {
	if r.remotes[path] {
		return path, nil
	}
	if !filepath.IsAbs(path) {
		if len(r.remotes) > 0 {
			return "", fmt.Errorf("%q is neither an absolute path nor the name of a configured remote repository (%s)", path, strings.Join(slices.Sorted(maps.Keys(r.remotes)), ", "))
		}
		return "", fmt.Errorf("%q is not an absolute path", path)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	top, err := gitTopLevel(ctx, path)
	if err != nil {
		return "", fmt.Errorf("%s is not inside a git repository", path)
	}
	if !r.allowed[top] {
		where := "the configuration file"
		if r.configPath != "" {
			where = r.configPath
		}
		return "", fmt.Errorf("%s is not a configured repository: add it as [[repositories]] path = %q in %s, or start the server inside it", top, top, where)
	}
	return top, nil
}

// gitTopLevel returns the real path of the top level of the checkout containing dir.
func gitTopLevel(ctx context.Context, dir string) (string, error) {
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", "-C", real, "rev-parse", "--show-toplevel")
	cmd.Env = append(os.Environ(), "LC_ALL=C", "GIT_TERMINAL_PROMPT=0", "GIT_OPTIONAL_LOCKS=0")
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return "", errors.New(strings.TrimSpace(string(ee.Stderr)))
		}
		return "", err
	}
	return filepath.EvalSymlinks(strings.TrimSpace(string(out)))
}

package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// repositories decides which repositories missions may name: the configured ones and the
// default, which is the git top level of the server's working directory (MCP clients start
// stdio servers in the project's directory).
type repositories struct {
	defaultRepo string          // "" when the working directory is not in a repository
	allowed     map[string]bool // canonical top levels
	configPath  string
}

// newRepositories canonicalises the configured repositories (each must be a git checkout)
// and finds the default from dir.
func newRepositories(ctx context.Context, c *Config, dir string) (*repositories, error) {
	r := &repositories{allowed: map[string]bool{}, configPath: c.path}
	for i, rc := range c.Repositories {
		top, err := gitTopLevel(ctx, rc.Path)
		if err != nil {
			return nil, fmt.Errorf("repositories[%d].path: %s: %w", i, rc.Path, err)
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
// default) repository becomes that repository's canonical top level; anything else is
// refused with a message saying how to allow it.
func (r *repositories) resolve(path string) (string, error) {
	if !filepath.IsAbs(path) {
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

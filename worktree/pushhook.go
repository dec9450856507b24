package worktree

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gofrs/flock"
)

// pushHook is the pre-receive hook Open installs in a repository with a checkout, so that a
// person's push into a checked-out branch and a landing into that checkout never interleave
// (pushhook.sh says why and how).
//
//go:embed pushhook.sh
var pushHook []byte

// pushHookMarker identifies our hook (any version) in a hooks directory.
const pushHookMarker = "# mcp-scheduler pre-receive hook, version "

// chainedHookName is where the person's own pre-receive hook goes when ours is installed.
const chainedHookName = "pre-receive.before-mcp-scheduler"

// checkoutLockPath is the lock that a landing into a checkout and the pre-receive hook of a
// push into a checked-out branch both take: in the repository's common git dir, so that every
// scheduler landing into this repository and every push agree on it whatever their data dirs.
func checkoutLockPath(commonDir string) string {
	return filepath.Join(commonDir, "mcp-scheduler", "checkout.lock")
}

// ensurePushHook installs pushHook as <common dir>/hooks/pre-receive. A pre-receive hook of
// the person's is renamed to chainedHookName, which ours runs; an older version of ours is
// replaced. When the repository sets core.hooksPath, git runs hooks from there, which may be
// a directory the person tracks: nothing is installed and the returned note says so and what
// to do. The note is empty when the hook is in place.
func (m *Manager) ensurePushHook(ctx context.Context, r *Repo) (string, error) {
	dir, err := m.personsHooksPath(ctx, r.root)
	if err != nil {
		return "", err
	}
	if dir != "" {
		standalone := filepath.Join(r.commonDir, "mcp-scheduler", "pre-receive")
		if err := writeExecutable(standalone, pushHook); err != nil {
			return "", err
		}
		return fmt.Sprintf("pushes into this checkout are not serialised with landings: core.hooksPath is %s, "+
			"where mcp-scheduler installs no hook; to serialise them, pipe the pre-receive hook's input there to %s "+
			"and refuse the push when it fails", dir, standalone), nil
	}
	hook := filepath.Join(r.commonDir, "hooks", "pre-receive")
	cur, err := os.ReadFile(hook)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return "", fmt.Errorf("read %s: %w", hook, err)
	case bytes.Equal(cur, pushHook):
		return "", nil
	case bytes.Contains(cur, []byte(pushHookMarker)):
		// an older version of ours: replaced below
	default:
		chained := filepath.Join(r.commonDir, "hooks", chainedHookName)
		if _, err := os.Lstat(chained); err == nil {
			return fmt.Sprintf("pushes into this checkout are not serialised with landings: %s is not "+
				"mcp-scheduler's and %s exists too, so mcp-scheduler leaves both alone", hook, chained), nil
		}
		if err := os.Rename(hook, chained); err != nil {
			return "", fmt.Errorf("keep the person's pre-receive hook: %w", err)
		}
		m.log.Info("installed mcp-scheduler's pre-receive hook; the repository's own runs after it", "hook", hook, "chained", chained)
	}
	return "", writeExecutable(hook, pushHook)
}

// personsHooksPath returns core.hooksPath as the person's configuration sets it (every file,
// include and GIT_CONFIG_* variable), ignoring the value our own git commands pass with -c.
func (m *Manager) personsHooksPath(ctx context.Context, root string) (string, error) {
	out, err := m.git.run(ctx, root, runOpts{readOnly: true}, "config", "--show-origin", "--get-all", "core.hooksPath")
	var ge *GitError
	if errors.As(err, &ge) && ge.ExitCode == 1 { // not set anywhere but on our command line
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read core.hooksPath: %w", err)
	}
	value := ""
	for _, line := range strings.Split(strings.TrimRight(string(out), "\n"), "\n") {
		origin, v, _ := strings.Cut(line, "\t")
		if origin != "command line:" {
			value = v
		}
	}
	return value, nil
}

// writeExecutable writes data to path (0755) atomically, creating the directory.
func writeExecutable(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("create %s: %w", filepath.Dir(path), err)
	}
	return writeFileAtomicMode(path, data, 0o755)
}

// lockCheckout takes the checkout lock of r (checkoutLockPath) for a move of a checked-out
// branch: a push into the checkout holds it from its pre-receive hook until git-receive-pack
// exits. A wait longer than a second is logged with its reason, once.
func (m *Manager) lockCheckout(ctx context.Context, r *Repo, checkout string) (func(), error) {
	path := checkoutLockPath(r.commonDir)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("checkout lock: %w", err)
	}
	fl := flock.New(path, flock.SetPermissions(0o644))
	ok, err := fl.TryLock()
	if err == nil && !ok {
		step("checkout.lock-wait")
		waitStart := time.Now()
		logged := time.AfterFunc(time.Second, func() {
			m.log.Info("landing waits for a push into the checkout to finish (the checkout lock is held by the push's pre-receive hook)",
				"checkout", checkout, "lock", path, "since", waitStart.Format(time.RFC3339))
		})
		ok, err = fl.TryLockContext(ctx, flockRetry)
		logged.Stop()
	}
	if err != nil || !ok {
		if err == nil {
			err = ctx.Err()
		}
		return nil, fmt.Errorf("checkout lock %s: %w", path, err)
	}
	return func() { _ = fl.Unlock() }, nil
}

package worktree

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"strings"
	"time"
)

// RemoteHead is what ProbeRemote learned of a remote repository.
type RemoteHead struct {
	// DefaultBranch is the branch the remote's HEAD points at ("" when the server does not
	// say: an old server, or a HEAD that is not a symbolic ref).
	DefaultBranch string `json:"default_branch,omitempty"`
	// Commit is the commit HEAD resolves to ("" for an empty repository).
	Commit string `json:"commit,omitempty"`
}

// DefaultProbeTimeout bounds ProbeRemote when given no timeout.
const DefaultProbeTimeout = 20 * time.Second

// ProbeRemote asks the remote at rawURL for its HEAD (`git ls-remote --symref <url> HEAD`)
// in batch mode, as the workspace manager talks to remotes: the remote transports only, no
// prompt (no terminal, no askpass: a missing key or credential fails at once with git's
// message), bounded by timeout (DefaultProbeTimeout when <= 0). gitPath "" is "git". A
// failure wraps ErrRemoteFailed and carries git's *GitError, its message with any password
// in the URL hidden.
func ProbeRemote(ctx context.Context, gitPath, rawURL string, timeout time.Duration) (RemoteHead, error) {
	if timeout <= 0 {
		timeout = DefaultProbeTimeout
	}
	if gitPath == "" {
		gitPath = "git"
	}
	g := newGitRunner(gitPath, timeout, Signature{}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	out, err := g.run(ctx, os.TempDir(), remoteOpts, "ls-remote", "--symref", "--end-of-options", rawURL, "HEAD")
	if err != nil {
		if ge, ok := err.(*GitError); ok {
			ge.Stderr = hidePassword(ge.Stderr, rawURL)
			ge.Args = []string{"ls-remote", "--symref", hidePassword(rawURL, rawURL), "HEAD"}
		}
		return RemoteHead{}, fmt.Errorf("%w: %w", ErrRemoteFailed, err)
	}
	return parseLsRemoteHead(string(out)), nil
}

// parseLsRemoteHead reads `git ls-remote --symref <url> HEAD`:
//
//	ref: refs/heads/main	HEAD
//	<sha>	HEAD
func parseLsRemoteHead(out string) RemoteHead {
	var h RemoteHead
	for _, line := range strings.Split(out, "\n") {
		left, ref, ok := strings.Cut(strings.TrimSpace(line), "\t")
		if !ok || ref != "HEAD" {
			continue
		}
		if target, isSym := strings.CutPrefix(left, "ref: "); isSym {
			h.DefaultBranch = strings.TrimPrefix(target, "refs/heads/")
		} else {
			h.Commit = left
		}
	}
	return h
}

// hidePassword replaces, in s, the URL rawURL with its password hidden, when it has one.
func hidePassword(s, rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil || u.User == nil {
		return s
	}
	if _, has := u.User.Password(); !has {
		return s
	}
	return strings.ReplaceAll(s, rawURL, u.Redacted())
}

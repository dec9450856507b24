package worktree

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
)

// Remote is a repository named by a git remote URL rather than a path on this machine (a bare
// repository the scheduler's nodes reach over ssh, http(s), git:// or a shared path). Each
// Manager keeps its own clone of it under DataDir/remotes/<Name>, fetches the target before it
// prepares a workspace or lands, and lands with a compare-and-set push (docs/workspaces.md,
// "Remote repositories").
type Remote struct {
	// Name is what missions call the repository ([A-Za-z0-9][A-Za-z0-9._-]{0,63}); it must be
	// the same on every node. RemoteName derives one from the URL.
	Name string
	// URL is what git clones, fetches and pushes to: ssh://, git://, http(s)://, scp-like
	// user@host:path, or an absolute path (file:// too).
	URL string
}

var remoteNamePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// remoteSchemes are the URL schemes a Remote may use; git's other transports (ext::, fd::)
// run commands and stay forbidden.
var remoteSchemes = []string{"ssh", "git", "http", "https", "file"}

// ValidateRemoteName accepts names matching [A-Za-z0-9][A-Za-z0-9._-]{0,63} that do not end in
// ".lock": a name holds no separator, so it can never be read as a path.
func ValidateRemoteName(name string) error {
	if !remoteNamePattern.MatchString(name) || strings.HasSuffix(name, ".lock") {
		return fmt.Errorf("remote repository name %q must match [A-Za-z0-9][A-Za-z0-9._-]{0,63} (and not end in .lock)", clip(name))
	}
	return nil
}

// RemoteName derives a repository name from a remote URL: the last element of its path
// without ".git", with every character outside [A-Za-z0-9._-] replaced by "-"
// ("ssh://git@host/team/shop.git" → "shop"). "" when nothing usable is left.
func RemoteName(rawURL string) string {
	p := rawURL
	if u, err := url.Parse(rawURL); err == nil && u.Scheme != "" && u.Path != "" {
		p = u.Path
	} else if _, after, ok := strings.Cut(rawURL, ":"); ok && !filepath.IsAbs(rawURL) {
		p = after // scp-like user@host:path
	}
	base := strings.TrimSuffix(path.Base(strings.TrimRight(p, "/")), ".git")
	name := strings.Map(func(r rune) rune {
		if r < 128 && (r == '.' || r == '_' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return r
		}
		return '-'
	}, base)
	name = strings.TrimLeft(name, ".-_")
	if len(name) > 64 {
		name = name[:64]
	}
	if ValidateRemoteName(name) != nil {
		return ""
	}
	return name
}

// Validate checks a Remote's name and that its URL is one git may reach with the transports
// allowed here.
func (rm Remote) Validate() error {
	if err := ValidateRemoteName(rm.Name); err != nil {
		return err
	}
	if rm.URL == "" || hasControl(rm.URL) || strings.HasPrefix(rm.URL, "-") {
		return fmt.Errorf("remote repository %s: URL %q is empty, starts with '-' or holds control characters", rm.Name, clip(rm.URL))
	}
	if filepath.IsAbs(rm.URL) {
		return nil
	}
	if scheme, rest, ok := strings.Cut(rm.URL, "://"); ok {
		for _, s := range remoteSchemes {
			if scheme == s {
				return rm.checkHost(strings.SplitN(rest, "/", 2)[0])
			}
		}
		return fmt.Errorf("remote repository %s: URL scheme %q is not one of %s", rm.Name, scheme, strings.Join(remoteSchemes, ", "))
	}
	if strings.Contains(rm.URL, "::") {
		return fmt.Errorf("remote repository %s: URL %q names a git remote helper, which is not allowed", rm.Name, rm.URL)
	}
	if host, _, ok := strings.Cut(rm.URL, ":"); ok {
		return rm.checkHost(host) // scp-like ssh
	}
	return fmt.Errorf("remote repository %s: URL %q is neither an absolute path nor a URL git can reach", rm.Name, rm.URL)
}

// checkHost refuses a host part ([user@]host[:port]) whose user or host starts with '-':
// ssh would read it as an option (ssh://-oProxyCommand=…/x; git refuses it too, as a
// "strange hostname", but only when a mission first fetches).
func (rm Remote) checkHost(hostPart string) error {
	user, host, found := strings.Cut(hostPart, "@")
	if !found {
		user, host = "", hostPart
	}
	if strings.HasPrefix(user, "-") || strings.HasPrefix(host, "-") {
		return fmt.Errorf("remote repository %s: URL %q has a user or host starting with '-', which ssh would read as an option", rm.Name, clip(rm.URL))
	}
	return nil
}

// remoteOpts are the run options of a git process that talks to a Remote: its transports
// allowed (ssh, git, http(s), file), never a remote helper.
var remoteOpts = runOpts{remote: true}

// Remote returns the remote this repository is a clone of, and false for a local repository.
func (r *Repo) Remote() (Remote, bool) {
	if r.remote == nil {
		return Remote{}, false
	}
	return *r.remote, true
}

// Name is what missions call the repository: the Remote's name, or Root for a local one.
func (r *Repo) Name() string {
	if r.remote != nil {
		return r.remote.Name
	}
	return r.root
}

// remotesDir is DataDir/remotes, where the clones of Remotes live.
func (m *Manager) remotesDir() string { return filepath.Join(m.cfg.DataDir, "remotes") }

// remoteOfPath returns the configured Remote whose clone holds real (a real path), if any.
func (m *Manager) remoteOfPath(real string) (Remote, bool) {
	rel, err := filepath.Rel(m.remotesDir(), real)
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		return Remote{}, false
	}
	name, _, _ := strings.Cut(rel, string(filepath.Separator))
	rm, ok := m.remotes[name]
	return rm, ok
}

// openRemote returns the repository of a Remote: its clone under DataDir/remotes/<name>, made
// on first use (cloneRemote), opened like a local repository with its default branch taken
// from the remote's HEAD.
func (m *Manager) openRemote(ctx context.Context, rm Remote) (*Repo, error) {
	m.mu.Lock()
	r, ok := m.repos[rm.Name]
	m.mu.Unlock()
	if ok {
		return r, nil
	}
	dir := filepath.Join(m.remotesDir(), rm.Name)
	release, err := m.locks.acquire(ctx, "remote-"+rm.Name)
	if err != nil {
		return nil, err
	}
	defer release()
	if _, err := os.Stat(filepath.Join(dir, ".git")); errors.Is(err, os.ErrNotExist) {
		if err := m.cloneRemote(ctx, rm, dir); err != nil {
			return nil, fmt.Errorf("remote repository %s (%s): %w", rm.Name, rm.URL, err)
		}
	}
	r, err = m.openRepo(ctx, dir)
	if err != nil {
		return nil, fmt.Errorf("remote repository %s: its clone %s: %w", rm.Name, dir, err)
	}
	r.remote = &Remote{Name: rm.Name, URL: rm.URL}
	r.defaultBranch = r.remoteHead()
	m.mu.Lock()
	if cached, ok := m.repos[rm.Name]; ok {
		m.mu.Unlock()
		return cached, nil
	}
	m.repos[rm.Name], m.repos[r.root] = r, r
	m.mu.Unlock()
	m.startFill(r)
	return r, nil
}

// cloneRemote clones rm into dir: `git clone --no-checkout` into a temporary directory beside
// it, HEAD detached at the remote's default branch (so that no checkout holds a branch and no
// file is written outside the workspaces), then renamed into place, so that a clone cut short
// never looks like a finished one.
func (m *Manager) cloneRemote(ctx context.Context, rm Remote, dir string) error {
	if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), "."+rm.Name+".clone-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if _, err := m.git.run(ctx, filepath.Dir(dir), remoteOpts, "clone", "--quiet", "--no-checkout", "--origin", "origin",
		"--end-of-options", rm.URL, tmp); err != nil {
		return fmt.Errorf("clone: %w: %w", ErrRemoteFailed, err)
	}
	head, err := m.git.run(ctx, tmp, runOpts{readOnly: true}, "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
	if err != nil {
		return m.unbornRemoteHead(ctx, tmp, rm.URL)
	}
	if _, err := m.git.run(ctx, tmp, runOpts{}, "update-ref", "--no-deref", "HEAD", strings.TrimSpace(string(head))); err != nil {
		return fmt.Errorf("detach the clone's HEAD: %w", err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		return fmt.Errorf("move the clone into place: %w", err)
	}
	m.log.Info("remote repository cloned", "repository", rm.Name, "url", rm.URL, "path", dir)
	return nil
}

// unbornRemoteHead explains a clone whose HEAD has no commit: the remote's default branch
// (its HEAD) names a branch nobody pushed — `git init --bare` names master, and the work was
// pushed to main — or the remote is empty. It names the branches the remote does have and
// the command that points its HEAD at one.
func (m *Manager) unbornRemoteHead(ctx context.Context, clone, url string) error {
	head := "HEAD"
	if out, err := m.git.run(ctx, clone, runOpts{readOnly: true}, "symbolic-ref", "--quiet", "HEAD"); err == nil {
		head = strings.TrimPrefix(strings.TrimSpace(string(out)), "refs/heads/")
	}
	out, _ := m.git.run(ctx, clone, runOpts{readOnly: true}, "for-each-ref", "--format=%(refname:lstrip=3)", "refs/remotes/origin/")
	branches := strings.Fields(string(out))
	if len(branches) == 0 {
		return errors.New("the remote has no commit yet: push a first commit to it")
	}
	return fmt.Errorf("the remote's default branch %s (its HEAD) has no commit; its branches are %s: point its HEAD at one "+
		"(on the server: git --git-dir=%s symbolic-ref HEAD refs/heads/%s) or push %s",
		head, strings.Join(branches, ", "), url, branches[0], head)
}

// remoteHead is the remote's default branch as the clone recorded it (refs/remotes/origin/HEAD),
// or "" when it is not known.
func (r *Repo) remoteHead() string {
	var branch string
	_ = r.read(func(gg *git.Repository) error {
		ref, err := gg.Storer.Reference(plumbing.NewRemoteHEADReferenceName("origin"))
		if err == nil && ref.Type() == plumbing.SymbolicReference {
			branch = strings.TrimPrefix(ref.Target().String(), "refs/remotes/origin/")
		}
		return err
	})
	return branch
}

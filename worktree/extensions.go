package worktree

import (
	"errors"
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5/config"
	format "github.com/go-git/go-git/v5/plumbing/format/config"
	"github.com/go-git/go-git/v5/storage"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// ErrUnsupportedExtension: the repository uses a git extension (extensions.* in its config)
// that changes how its objects or refs are stored in a way this package cannot read, or that
// the git CLI it runs does not know. The error is an *ExtensionError naming the extension and
// what to do; nothing was created.
var ErrUnsupportedExtension = errors.New("the repository uses a git extension mcp-scheduler cannot work with")

// ExtensionError is the ErrUnsupportedExtension of one repository: the extension, why it
// stops workspaces and what the person can do. Use errors.As to read it.
type ExtensionError struct {
	Repo      string // the top level (or the path given to Open when git refused it)
	Extension string // "objectformat", as written in the config
	Value     string // its value ("sha256"); "" when git refused it unread
	Reason    string // why it stops workspaces
	Fix       string // what to do
}

// Error renders "repository R uses extensions.X = V, which mcp-scheduler cannot work with:
// reason; fix".
func (e *ExtensionError) Error() string {
	ext := "extensions." + e.Extension
	if e.Value != "" {
		ext += " = " + e.Value
	}
	return fmt.Sprintf("repository %s uses %s, which mcp-scheduler cannot work with: %s; %s", e.Repo, ext, e.Reason, e.Fix)
}

// Unwrap makes errors.Is(err, ErrUnsupportedExtension) hold.
func (e *ExtensionError) Unwrap() error { return ErrUnsupportedExtension }

// legacyExtensions are the extensions git honours in a repository of format version 0 (git's
// setup.c); it ignores every other extensions.* there. go-git v5 means to accept the same
// list but compares its lower-cased names to "worktreeConfig" and "partialClone", so it
// refuses worktreeConfig in every format (issue 29).
var legacyExtensions = map[string]bool{"noop": true, "partialclone": true, "preciousobjects": true, "worktreeconfig": true}

// readableExtension reports whether an extension leaves everything this package reads with
// go-git (objects, refs, HEAD) as a repository without it has them: go-git reads no
// configuration beyond the repository's own config file, and writes none (storageConfig).
//   - worktreeConfig adds config.worktree files, which only the git CLI reads (`git
//     sparse-checkout set` and `git config --worktree` turn it on);
//   - preciousObjects forbids deleting objects, which nothing here does (gc.auto=0);
//   - noop and noop-v1 change nothing; objectFormat=sha1 and refStorage=files are the defaults.
func readableExtension(name, value string) bool {
	switch name {
	case "worktreeconfig", "preciousobjects", "noop", "noop-v1":
		return true
	case "objectformat":
		return value == "sha1"
	case "refstorage":
		return value == "files"
	}
	return false
}

// classifyExtensions returns the extensions of cfg that go-git must not be shown (its Open
// refuses every extension but noop) and that are safe to hide, or an *ExtensionError for the
// first one that changes what go-git would read. In a format-0 repository git ignores all but
// legacyExtensions, so they are hidden too: they mean nothing to git there either.
func classifyExtensions(root string, cfg *config.Config) ([]string, error) {
	if cfg == nil || cfg.Raw == nil || !cfg.Raw.HasSection("extensions") {
		return nil, nil
	}
	v1 := cfg.Core.RepositoryFormatVersion == format.Version_1
	var hide []string
	for _, opt := range cfg.Raw.Section("extensions").Options {
		name, value := strings.ToLower(opt.Key), strings.ToLower(strings.TrimSpace(opt.Value))
		if (!v1 && !legacyExtensions[name]) || readableExtension(name, value) {
			hide = append(hide, opt.Key)
			continue
		}
		reason, fix := extensionAdvice(name)
		return nil, &ExtensionError{Repo: root, Extension: opt.Key, Value: opt.Value, Reason: reason, Fix: fix}
	}
	return hide, nil
}

// extensionAdvice says why an extension stops workspaces and what to do.
func extensionAdvice(name string) (reason, fix string) {
	switch name {
	case "objectformat":
		return "go-git v5, which mcp-scheduler reads objects with, knows only SHA-1 object names",
			"use mcp-scheduler with a SHA-1 repository (git cannot convert a repository's object format in place)"
	case "refstorage":
		return "go-git v5, which mcp-scheduler reads refs with, reads only the files ref store",
			"convert the refs with `git refs migrate --ref-format=files` (git 2.46 or newer)"
	case "partialclone":
		return "this is a partial clone: git fetches missing objects from the promisor remote on demand, " +
				"and workspaces never use the network (go-git would find them missing)",
			"point the [[repositories]] path at a full clone (git clone without --filter)"
	}
	return "go-git v5, which mcp-scheduler reads the repository with, does not know this extension",
		"point the [[repositories]] path at a clone without it, and report the extension to mcp-scheduler's maintainers"
}

// gitRefusedExtension turns git's own refusal of a repository ("fatal: unknown repository
// extension found:\n\tzzz", "fatal: repo version is 0, but v1-only extension found:\n\t…")
// into an *ExtensionError; ok is false for any other failure.
func gitRefusedExtension(path, stderr string) (*ExtensionError, bool) {
	msg := stderr
	if i := strings.LastIndex(msg, "fatal:"); i >= 0 { // after any warning saying the same
		msg = msg[i:]
	}
	head, rest, found := strings.Cut(msg, "found:")
	if !found || !strings.Contains(head, "extension") {
		return nil, false
	}
	var names []string
	for _, line := range strings.Split(rest, "\n") {
		if !strings.HasPrefix(line, "\t") {
			if strings.TrimSpace(line) != "" {
				break
			}
			continue
		}
		names = append(names, strings.TrimSpace(line))
	}
	if len(names) == 0 {
		return nil, false
	}
	e := &ExtensionError{Repo: path, Extension: strings.Join(names, ", extensions."),
		Reason: "the git CLI refuses the repository (\"" + strings.TrimPrefix(head, "fatal: ") + "found\")",
		Fix:    "run mcp-scheduler with a git that knows the extension (the one that made the repository), or remove the extension if nothing needs it (git config -f <git dir>/config --unset extensions.<name>)"}
	if strings.Contains(head, "repo version is 0") {
		e.Reason = "git refuses an extension it knows to need core.repositoryformatversion = 1 in a repository of version 0"
		e.Fix = "set core.repositoryformatversion = 1 if the extension is meant, or remove it (git config -f <git dir>/config --unset extensions.<name>: git refuses every other command here)"
	}
	return e, true
}

// readableStorage is the repository's storage as go-git's Open accepts it: the extensions
// classifyExtensions found safe to hide are left out of the configuration go-git sees (go-git
// v5 refuses them all, issue 29). Objects and refs are read as they are; nothing here writes
// the configuration through go-git (SetConfig refuses: it would drop the hidden extensions).
type readableStorage struct {
	*filesystem.Storage
	hidden []string
}

// errConfigWrite is readableStorage's answer to SetConfig.
var errConfigWrite = errors.New("worktree: the repository's configuration is written with the git CLI only")

// Config is the repository's configuration without the hidden extensions.
func (s *readableStorage) Config() (*config.Config, error) {
	cfg, err := s.Storage.Config()
	if err != nil {
		return nil, err
	}
	sec := cfg.Raw.Section("extensions")
	for _, name := range s.hidden {
		sec.RemoveOption(name)
	}
	if len(sec.Options) == 0 {
		cfg.Raw.RemoveSection("extensions")
	}
	return cfg, nil
}

// SetConfig refuses: see readableStorage.
func (s *readableStorage) SetConfig(*config.Config) error { return errConfigWrite }

// openableStorage checks the extensions of the repository at root and returns the storage to
// give go-git's Open: s itself when it has none to hide, an *ExtensionError when one changes
// what go-git would read.
func openableStorage(root string, s *filesystem.Storage) (storage.Storer, error) {
	cfg, err := s.Config()
	if err != nil {
		return nil, fmt.Errorf("read the configuration: %w", err)
	}
	hide, err := classifyExtensions(root, cfg)
	if err != nil || len(hide) == 0 {
		return s, err
	}
	return &readableStorage{Storage: s, hidden: hide}, nil
}

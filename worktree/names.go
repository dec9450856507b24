package worktree

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// BranchPrefix starts the name of every branch this package creates:
// BranchPrefix + "<mission id>/a<attempt>".
const BranchPrefix = "mcp-scheduler/"

// MaxAttempt is the largest attempt number accepted.
const MaxAttempt = 99999

// maxRefLen bounds branch names and revisions (bytes).
const maxRefLen = 255

var (
	missionIDPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
	hexPattern       = regexp.MustCompile(`^[0-9a-f]{4,64}$`)
)

// ValidateMissionID accepts ids matching [A-Za-z0-9_-]{1,64}; anything else (path separators,
// "..", NUL, over-long strings) wraps ErrInvalidMissionID (bug case B31).
func ValidateMissionID(id string) error {
	if !missionIDPattern.MatchString(id) {
		return fmt.Errorf("%w: %q must match [A-Za-z0-9_-]{1,64}", ErrInvalidMissionID, clip(id))
	}
	return nil
}

// ValidateAttempt accepts 1..MaxAttempt; anything else wraps ErrInvalidAttempt.
func ValidateAttempt(attempt int) error {
	if attempt < 1 || attempt > MaxAttempt {
		return fmt.Errorf("%w: %d not in 1..%d", ErrInvalidAttempt, attempt, MaxAttempt)
	}
	return nil
}

// AttemptBranch is the branch of a mission attempt: "mcp-scheduler/<mission id>/a<attempt>".
// It does not validate its arguments.
func AttemptBranch(missionID string, attempt int) string {
	return BranchPrefix + missionID + "/a" + strconv.Itoa(attempt)
}

// ValidateBranchName checks a short branch name ("main", "feature/x") against git's
// check-ref-format rules for branches, before any git process sees it (bug case B32): no
// leading "-", no "..", "@{", "//", control characters, spaces or any of ~^:?*[\, no component
// starting with "." or ending in ".lock", no trailing "/" or ".", not "@" or "HEAD", valid
// UTF-8, at most 255 bytes. Full ref names ("refs/heads/x") are refused: give the short name.
// Violations wrap ErrInvalidRef.
func ValidateBranchName(name string) error {
	if reason := branchNameProblem(name); reason != "" {
		return fmt.Errorf("%w: branch %q: %s", ErrInvalidRef, clip(name), reason)
	}
	return nil
}

func branchNameProblem(name string) string {
	switch {
	case name == "":
		return "empty"
	case len(name) > maxRefLen:
		return "longer than 255 bytes"
	case !utf8.ValidString(name):
		return "not valid UTF-8"
	case strings.HasPrefix(name, "-"):
		return "starts with '-' (would read as an option)"
	case name == "@" || name == "HEAD":
		return "reserved name"
	case strings.HasPrefix(name, "refs/"):
		return "give the short branch name, not a full ref"
	case strings.Contains(name, ".."):
		return "contains '..'"
	case strings.Contains(name, "@{"):
		return "contains '@{'"
	case strings.Contains(name, "//"), strings.HasPrefix(name, "/"), strings.HasSuffix(name, "/"):
		return "empty path component"
	case strings.HasSuffix(name, "."):
		return "ends with '.'"
	case hasControl(name):
		return "contains control characters"
	case strings.ContainsAny(name, " ~^:?*[\\"):
		return "contains a space or one of ~^:?*[\\"
	}
	for _, comp := range strings.Split(name, "/") {
		if strings.HasPrefix(comp, ".") {
			return "a component starts with '.'"
		}
		if strings.HasSuffix(comp, ".lock") {
			return "a component ends with '.lock'"
		}
	}
	return ""
}

// ValidateRevision accepts a commit id (4 to 64 lower-case hex digits) or a valid branch name
// (ValidateBranchName). Anything else, including expressions such as "x..y", "a@{1}", "HEAD~2"
// or option-like strings, wraps ErrInvalidRef.
func ValidateRevision(rev string) error {
	if hexPattern.MatchString(rev) {
		return nil
	}
	if reason := branchNameProblem(rev); reason != "" {
		return fmt.Errorf("%w: revision %q is neither a commit id nor a branch name: %s", ErrInvalidRef, clip(rev), reason)
	}
	return nil
}

// underRoot returns p cleaned, after checking that it stays inside root once every existing
// symbolic link on the way is resolved (bug case B31). root must already be a real path.
func underRoot(root, p string) (string, error) {
	p = filepath.Clean(p)
	real, err := resolveExisting(p)
	if err != nil {
		return "", err
	}
	rel, err := filepath.Rel(root, real)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return "", fmt.Errorf("%w: %s resolves to %s, outside %s", ErrPathEscapes, p, real, root)
	}
	return p, nil
}

// resolveExisting resolves symbolic links in the longest existing prefix of p and appends the
// rest unchanged.
func resolveExisting(p string) (string, error) {
	rest := ""
	cur := p
	for {
		real, err := filepath.EvalSymlinks(cur)
		if err == nil {
			return filepath.Join(real, rest), nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("resolve %s: %w", cur, err)
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return p, nil
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
}

// realDir creates dir (0700) when missing and returns its real path.
func realDir(dir string) (string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("create %s: %w", dir, err)
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", fmt.Errorf("resolve %s: %w", dir, err)
	}
	return real, nil
}

func hasControl(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return true
		}
	}
	return false
}

func hasDotDot(p string) bool {
	for _, seg := range strings.FieldsFunc(p, func(r rune) bool { return r == '/' || r == '\\' }) {
		if seg == ".." {
			return true
		}
	}
	return false
}

// clip shortens user input quoted in error messages.
func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}

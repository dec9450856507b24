package tools

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// The token file of the HTTP listener ([http] token_file, serve --token-file; docs/
// configuration.md, "Tokens"): one token per agent, a line `NAME TOKEN` each, with blank
// lines and lines starting with # ignored. A file whose only entry is one bare word is the
// one-token form of earlier versions: that token is named DefaultTokenName.

// DefaultTokenName names the token of a one-token file, of --token and of
// $MCP_SCHEDULER_TOKEN.
const DefaultTokenName = "default"

// MinTokenLength is the shortest token a NAME TOKEN line may carry, in bytes. A bare
// one-token file keeps working with a shorter one, with a warning.
const MinTokenLength = 16

// maxTokenFileBytes bounds how much of a token file is read.
const maxTokenFileBytes = 1 << 20

// ErrTokenFile is wrapped by every refusal of a token file's contents or permissions.
var ErrTokenFile = errors.New("token file refused")

// namedToken is one entry of a token set: the agent's name and the SHA-256 of its token.
type namedToken struct {
	name   string
	digest [sha256.Size]byte
}

// tokenFileError is a refusal naming the file and, when it is about one line, the line.
func tokenFileError(path string, line int, format string, args ...any) error {
	where := path
	if line > 0 {
		where = fmt.Sprintf("%s, line %d", path, line)
	}
	return fmt.Errorf("%w: %s: %s", ErrTokenFile, where, fmt.Sprintf(format, args...))
}

// readTokenFile reads and checks the token file at path: it must be a regular file that
// neither group nor others may read or write (mode 0600 or stricter). It returns the
// entries, warnings a person should see (a short one-token file), or an error that names the
// file and line and says what to do; no error or warning contains a token.
func readTokenFile(path string) ([]namedToken, []string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w (give the absolute path of a file this user can read)", ErrTokenFile, err)
	}
	defer func() { _ = f.Close() }()
	st, err := f.Stat()
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrTokenFile, err)
	}
	if !st.Mode().IsRegular() {
		return nil, nil, tokenFileError(path, 0, "is not a regular file (mode %v)", st.Mode())
	}
	if st.Mode().Perm()&0o077 != 0 {
		return nil, nil, tokenFileError(path, 0, "is readable by others (mode %v): run chmod 600 %s", st.Mode().Perm(), path)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxTokenFileBytes+1))
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %s: %w", ErrTokenFile, path, err)
	}
	if len(b) > maxTokenFileBytes {
		return nil, nil, tokenFileError(path, 0, "is larger than %d bytes: a token file holds NAME TOKEN lines", maxTokenFileBytes)
	}
	return parseTokenFile(path, string(b))
}

// parseTokenFile parses a token file's text (path only names it in errors).
func parseTokenFile(path, text string) ([]namedToken, []string, error) {
	var (
		out      []namedToken
		bare     []int // lines holding one bare word
		short    bool  // a bare word shorter than MinTokenLength
		names    = map[string]int{}
		digests  = map[[sha256.Size]byte]int{}
		warnings []string
	)
	for i, line := range strings.Split(text, "\n") {
		n := i + 1
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		switch len(fields) {
		case 1:
			bare, short = append(bare, n), len(fields[0]) < MinTokenLength
			fields = []string{DefaultTokenName, fields[0]}
		case 2:
			if err := checkTokenLine(path, n, fields[0], fields[1]); err != nil {
				return nil, nil, err
			}
		default:
			return nil, nil, tokenFileError(path, n, "%d words; write NAME TOKEN (a token contains no spaces)", len(fields))
		}
		t := namedToken{name: fields[0], digest: sha256.Sum256([]byte(fields[1]))}
		if first, ok := names[t.name]; ok {
			return nil, nil, tokenFileError(path, n, "the name %q is used again (first on line %d): give every agent its own name", t.name, first)
		}
		if first, ok := digests[t.digest]; ok {
			return nil, nil, tokenFileError(path, n, "the token of %q is the same as the one on line %d: give every agent its own token", t.name, first)
		}
		names[t.name], digests[t.digest] = n, n
		out = append(out, t)
	}
	switch {
	case len(out) == 0:
		return nil, nil, tokenFileError(path, 0, "is empty (or holds only comments): write one NAME TOKEN line per agent, or a single bare token")
	case len(bare) > 0 && len(out) > 1:
		return nil, nil, tokenFileError(path, bare[0], "holds one word but the file holds several tokens: write NAME TOKEN on every line (a bare token works only alone in its file)")
	case short:
		warnings = append(warnings, fmt.Sprintf("token file %s: its token is shorter than %d characters; a longer one (e.g. openssl rand -hex 32) is harder to guess", path, MinTokenLength))
	}
	return out, warnings, nil
}

// checkTokenLine checks one NAME TOKEN line.
func checkTokenLine(path string, n int, name, token string) error {
	if err := domain.CheckName("name", "token names", name); err != nil {
		return tokenFileError(path, n, "%v", err)
	}
	if !agentIDPattern.MatchString(name) {
		return tokenFileError(path, n, "%q is not a token name: use 1-64 characters of A-Z a-z 0-9 _ . : -, starting with a letter or digit", clip(name, 80))
	}
	if len(token) < MinTokenLength {
		return tokenFileError(path, n, "the token of %q is %d characters long; use at least %d (e.g. openssl rand -hex 32)", name, len(token), MinTokenLength)
	}
	return nil
}

package tools

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"sync"
)

// Why a bearer token was refused (the 401's message says the same, never the token).
var (
	// ErrTokenUnknown: the token is none of the server's.
	ErrTokenUnknown = errors.New("this bearer token is not one of the server's")
	// ErrTokenRevoked: the token was admitted earlier in this process and has since left the
	// token file.
	ErrTokenRevoked = errors.New("this bearer token was revoked (it left the server's token file)")
	// ErrTokenFileBroken: the token file in place does not validate, so nobody is admitted
	// until it is fixed (the server's log says what is wrong with it).
	ErrTokenFileBroken = errors.New("the server's token file does not validate now, so no token is admitted; its operator sees why in the server's log")
)

// Tokens is the set of bearer tokens the HTTP listener admits, each with the name of the
// agent it belongs to (docs/configuration.md, "Tokens"). A set read from a token file
// follows the file: each check stats it and re-reads it when its size, modification time,
// mode or identity changed, so adding or removing a line takes effect on the next request,
// without a restart. A file that stops validating admits nobody until it is fixed; the
// error is logged once per change. A nil *Tokens admits everyone (no token configured).
// Safe for concurrent use.
type Tokens struct {
	path string // "" for a fixed token (--token, $MCP_SCHEDULER_TOKEN)
	log  *slog.Logger

	mu      sync.RWMutex
	set     []namedToken                 // the last file that validated
	err     error                        // why the file in place is refused (nil: set is its contents)
	info    os.FileInfo                  // the file as it was stat'ed before it was last read
	statErr string                       // the last stat error's text ("" when stat worked)
	gen     uint64                       // bumped each time set changes
	revoked map[[sha256.Size]byte]string // tokens admitted earlier and since removed → name
}

// FixedToken is the one-token set of --token or $MCP_SCHEDULER_TOKEN, named
// DefaultTokenName; nil for "" (no token).
func FixedToken(token string) *Tokens {
	if token == "" {
		return nil
	}
	return &Tokens{set: []namedToken{{name: DefaultTokenName, digest: sha256.Sum256([]byte(token))}}}
}

// OpenTokenFile reads the token file at path (absolute) and returns the set that follows it.
// A file that is missing, unreadable, readable by others, empty or malformed is refused with
// an error wrapping ErrTokenFile that names the file and line; warnings (a short one-token
// file) go to log.
func OpenTokenFile(path string, log *slog.Logger) (*Tokens, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	t := &Tokens{path: path, log: log, revoked: map[[sha256.Size]byte]string{}}
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w (give the absolute path of a file this user can read)", ErrTokenFile, err)
	}
	set, warnings, err := readTokenFile(path)
	if err != nil {
		return nil, err
	}
	for _, w := range warnings {
		log.Warn(w)
	}
	t.set, t.info = set, st
	return t, nil
}

// Names returns the names of the tokens in force, sorted ("default" for a one-token set).
// It re-reads a changed file first.
func (t *Tokens) Names() []string {
	if t == nil {
		return nil
	}
	t.refresh()
	t.mu.RLock()
	defer t.mu.RUnlock()
	if t.err != nil {
		return nil
	}
	names := make([]string, 0, len(t.set))
	for _, e := range t.set {
		names = append(names, e.name)
	}
	slices.Sort(names)
	return names
}

// Path is the token file the set follows ("" for a fixed token).
func (t *Tokens) Path() string {
	if t == nil {
		return ""
	}
	return t.path
}

// Authenticate returns the name of the agent whose token presented is, re-reading a changed
// token file first. The comparison runs in constant time over every token (SHA-256 digests
// compared with crypto/subtle). Errors: ErrTokenUnknown, ErrTokenRevoked, ErrTokenFileBroken.
func (t *Tokens) Authenticate(presented string) (string, error) {
	e, err := t.authenticate(presented)
	return e.name, err
}

func (t *Tokens) authenticate(presented string) (namedToken, error) {
	t.refresh()
	d := sha256.Sum256([]byte(presented))
	t.mu.RLock()
	defer t.mu.RUnlock()
	if t.err != nil {
		return namedToken{}, ErrTokenFileBroken
	}
	found := -1
	for i, e := range t.set { // every entry, no early exit
		if subtle.ConstantTimeCompare(d[:], e.digest[:]) == 1 {
			found = i
		}
	}
	if found >= 0 {
		return t.set[found], nil
	}
	if _, ok := t.revoked[d]; ok {
		return namedToken{}, ErrTokenRevoked
	}
	return namedToken{}, ErrTokenUnknown
}

// Proof returns an HMAC under key of the named token's digest, for a session cookie that
// proves a login with that token without holding it (the dashboard): it changes when the
// token does, and ok is false once the name has no token (revoked) or the file is broken.
func (t *Tokens) Proof(name string, key []byte) (proof string, ok bool) {
	t.refresh()
	t.mu.RLock()
	defer t.mu.RUnlock()
	if t.err != nil {
		return "", false
	}
	for _, e := range t.set {
		if e.name == name {
			mac := hmac.New(sha256.New, key)
			mac.Write([]byte("mcp-scheduler session\x00" + name + "\x00"))
			mac.Write(e.digest[:])
			return fmt.Sprintf("%x", mac.Sum(nil)), true
		}
	}
	return "", false
}

// admits reports whether the token e is in the last set that validated (open streams are
// judged by it: a file broken for a moment does not cut them).
func (t *Tokens) admits(e namedToken) bool {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return slices.Contains(t.set, e)
}

// generation counts the changes of the set (for the listener's sweep of open requests).
func (t *Tokens) generation() uint64 {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.gen
}

// refresh re-reads the token file when its stat differs from the one last read.
func (t *Tokens) refresh() {
	if t.path == "" {
		return
	}
	st, err := os.Stat(t.path)
	t.mu.RLock()
	same := (err == nil && t.info != nil && sameStat(t.info, st)) || (err != nil && t.statErr == err.Error())
	t.mu.RUnlock()
	if !same {
		t.reload(st, err)
	}
}

// sameStat reports whether two stats of the token file show the same file unchanged.
func sameStat(a, b os.FileInfo) bool {
	return os.SameFile(a, b) && a.Size() == b.Size() && a.ModTime().Equal(b.ModTime()) && a.Mode() == b.Mode()
}

// reload reads the file stat'ed as st (statErr when stat failed) and puts it in force, or
// refuses it and admits nobody until it changes again.
func (t *Tokens) reload(st os.FileInfo, statErr error) {
	set, warnings, err := readTokenFile(t.path)
	if statErr != nil && err == nil {
		err = fmt.Errorf("%w: %w", ErrTokenFile, statErr)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.info, t.statErr = st, ""
	if statErr != nil {
		t.info, t.statErr = nil, statErr.Error()
	}
	if err != nil {
		if t.err == nil || t.err.Error() != err.Error() {
			t.log.Error("token file refused: no bearer token is admitted until it is fixed; open streams stay until a valid file revokes them",
				"token_file", t.path, "err", err)
		}
		t.err = err
		return
	}
	t.err = nil
	for _, w := range warnings {
		t.log.Warn(w)
	}
	if slices.Equal(set, t.set) {
		return
	}
	revoked := t.revoke(set)
	t.set = set
	t.gen++
	t.log.Info("token file reloaded: its tokens are in force from this request on", "token_file", t.path,
		"tokens", len(set), "names", namesOf(set), "revoked", revoked)
}

// revoke remembers the tokens of the set in force that next leaves out (so their 401 says
// revoked) and returns their names; a token that comes back is no longer revoked.
func (t *Tokens) revoke(next []namedToken) []string {
	var names []string
	for _, e := range t.set {
		if !slices.Contains(next, e) {
			t.revoked[e.digest] = e.name
			names = append(names, e.name)
		}
	}
	for _, e := range next {
		delete(t.revoked, e.digest)
	}
	return names
}

func namesOf(set []namedToken) []string {
	names := make([]string, 0, len(set))
	for _, e := range set {
		names = append(names, e.name)
	}
	return names
}

// tokenKey carries the token a request was admitted with (name and digest).
type tokenKey struct{}

// withToken returns ctx carrying the admitted token.
func withToken(ctx context.Context, e namedToken) context.Context {
	if e.name == "" {
		return ctx
	}
	return context.WithValue(ctx, tokenKey{}, e)
}

// withTokenName returns ctx carrying the admitted token's name only (a call run as a task,
// after its request ended).
func withTokenName(ctx context.Context, name string) context.Context {
	return withToken(ctx, namedToken{name: name})
}

// tokenOf is the token the request behind ctx was admitted with (zero: none).
func tokenOf(ctx context.Context) namedToken {
	e, _ := ctx.Value(tokenKey{}).(namedToken)
	return e
}

// TokenName is the name of the bearer token the request behind ctx was admitted with (its
// agent, docs/configuration.md "Tokens"): "" over stdio, or over HTTP without a token.
func TokenName(ctx context.Context) string { return tokenOf(ctx).name }

package tools

import (
	"crypto/sha256"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const (
	tokA = "alice-0123456789abcdef"
	tokB = "bob-0123456789abcdef00"
)

func writeTokens(t *testing.T, path, body string, mode os.FileMode) {
	t.Helper()
	tmp := path + ".new"
	require.NoError(t, os.WriteFile(tmp, []byte(body), mode))
	require.NoError(t, os.Chmod(tmp, mode))
	require.NoError(t, os.Rename(tmp, path))
}

// TestTokenFile_Refusals: every malformed file is refused with the file, the line and what
// to do, and no refusal contains a token.
func TestTokenFile_Refusals(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tokens")
	for body, want := range map[string]string{
		"alice " + tokA + "\nalice " + tokB:      path + `, line 2: the name "alice" is used again (first on line 1): give every agent its own name`,
		"alice " + tokA + "\n# bob\nbob " + tokA: path + `, line 3: the token of "bob" is the same as the one on line 1: give every agent its own token`,
		"alice " + tokA[:15]:                     path + `, line 1: the token of "alice" is 15 characters long; use at least 16`,
		tokA + "\nbob " + tokB:                   path + ", line 1: holds one word but the file holds several tokens: write NAME TOKEN on every line",
		"alice " + tokA + " extra":               path + ", line 1: 3 words; write NAME TOKEN",
		"-alice " + tokA:                         path + `, line 1: "-alice" is not a token name`,
		"al\u202eice " + tokA:                    path + `, line 1: name: contains U+202E (RIGHT-TO-LEFT OVERRIDE) at character 3: `,
		"":                                       path + ": is empty (or holds only comments)",
		"   \n# only a comment\n":                path + ": is empty (or holds only comments)",
		strings.Repeat("x", maxTokenFileBytes+1): path + ": is larger than",
	} {
		writeTokens(t, path, body, 0o600)
		_, err := OpenTokenFile(path, nil)
		require.ErrorIs(t, err, ErrTokenFile, body)
		require.ErrorContains(t, err, want)
		require.NotContains(t, err.Error(), tokA)
		require.NotContains(t, err.Error(), tokB)
	}
	writeTokens(t, path, "alice "+tokA, 0o640)
	_, err := OpenTokenFile(path, nil)
	require.ErrorContains(t, err, "is readable by others (mode -rw-r-----): run chmod 600 "+path)
	_, err = OpenTokenFile(filepath.Join(t.TempDir(), "missing"), nil)
	require.ErrorIs(t, err, ErrTokenFile)
	require.ErrorContains(t, err, "no such file")
	_, err = OpenTokenFile(t.TempDir(), nil)
	require.ErrorContains(t, err, "is not a regular file")
}

// TestTokenFile_Forms: NAME TOKEN lines with comments and blank lines; the one-token file of
// earlier versions (one bare word, any length) is named default.
func TestTokenFile_Forms(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tokens")
	writeTokens(t, path, "# team\n  bob\t"+tokB+"  \n\nalice "+tokA+"\n", 0o600)
	ts, err := OpenTokenFile(path, nil)
	require.NoError(t, err)
	require.Equal(t, []string{"alice", "bob"}, ts.Names())
	for tok, name := range map[string]string{tokA: "alice", tokB: "bob"} {
		got, err := ts.Authenticate(tok)
		require.NoError(t, err)
		require.Equal(t, name, got)
	}
	_, err = ts.Authenticate("bob")
	require.ErrorIs(t, err, ErrTokenUnknown, "a name is not a token")

	writeTokens(t, path, " short \n", 0o600)
	ts, err = OpenTokenFile(path, nil)
	require.NoError(t, err, "a short bare token keeps working as before (with a warning)")
	name, err := ts.Authenticate("short")
	require.NoError(t, err)
	require.Equal(t, DefaultTokenName, name)
	require.Equal(t, []string{DefaultTokenName}, FixedToken("x").Names())
	require.Nil(t, FixedToken(""))
}

// TestTokens_FollowFile: an edit of the file takes effect on the next check, with no reload
// call: a removed line is revoked (and says so), a file replaced in place or renamed over is
// read again, a broken file admits nobody until it is fixed, a line put back works again.
func TestTokens_FollowFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tokens")
	writeTokens(t, path, "alice "+tokA+"\nbob "+tokB+"\n", 0o600)
	ts, err := OpenTokenFile(path, nil)
	require.NoError(t, err)
	gen := ts.generation()

	writeTokens(t, path, "alice "+tokA+"\n", 0o600)
	_, err = ts.Authenticate(tokB)
	require.ErrorIs(t, err, ErrTokenRevoked)
	require.NotContains(t, err.Error(), tokB)
	name, err := ts.Authenticate(tokA)
	require.NoError(t, err)
	require.Equal(t, "alice", name)
	require.Greater(t, ts.generation(), gen)
	require.False(t, ts.admits(namedToken{name: "bob", digest: digestOf(tokB)}))
	require.True(t, ts.admits(namedToken{name: "alice", digest: digestOf(tokA)}))

	require.NoError(t, os.WriteFile(path, []byte("alice "+tokA+"\nbob "+tokB+"\n"), 0o600)) // in place, same inode
	_, err = ts.Authenticate(tokB)
	require.NoError(t, err, "an in-place edit is read again too")

	writeTokens(t, path, "alice "+tokA+"\nalice "+tokB+"\n", 0o600)
	_, err = ts.Authenticate(tokA)
	require.ErrorIs(t, err, ErrTokenFileBroken, "a file that does not validate admits nobody")
	require.Nil(t, ts.Names())
	require.True(t, ts.admits(namedToken{name: "alice", digest: digestOf(tokA)}), "open streams are judged by the last valid file")
	writeTokens(t, path, "alice "+tokA+"\n", 0o644)
	_, err = ts.Authenticate(tokA)
	require.ErrorIs(t, err, ErrTokenFileBroken, "nor one others can read")
	require.NoError(t, os.Remove(path))
	_, err = ts.Authenticate(tokA)
	require.ErrorIs(t, err, ErrTokenFileBroken, "nor a missing one")
	writeTokens(t, path, "carol "+tokB+"\n", 0o600)
	name, err = ts.Authenticate(tokB)
	require.NoError(t, err)
	require.Equal(t, "carol", name, "a token may come back under another name")
	_, err = ts.Authenticate(tokA)
	require.ErrorIs(t, err, ErrTokenRevoked)

	p1, ok := ts.Proof("carol", []byte("key"))
	require.True(t, ok)
	p2, _ := ts.Proof("carol", []byte("other key"))
	require.NotEqual(t, p1, p2)
	_, ok = ts.Proof("alice", []byte("key"))
	require.False(t, ok, "a revoked name has no proof")
}

func digestOf(token string) [sha256.Size]byte { return sha256.Sum256([]byte(token)) }

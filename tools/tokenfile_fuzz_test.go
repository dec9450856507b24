package tools

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzTokenFile writes arbitrary bytes as a token file (mode 0600) and reads it with the
// production readTokenFile. Properties: an error wraps ErrTokenFile and names the file; no
// error or warning contains a token (the second word of a NAME TOKEN line, or a bare word);
// an accepted file gives one entry per line that is not blank or a comment, each with a valid
// name (or "default" for a bare token), names and tokens all different.
//
//	go test -run '^$' -fuzz '^FuzzTokenFile$' -fuzztime 10m ./tools/
func FuzzTokenFile(f *testing.F) {
	f.Add("# agents\nalice 0123456789abcdef0123456789abcdef\nbob fedcba9876543210fedcba9876543210\n")
	f.Add("0123456789abcdef0123456789abcdef\n")
	f.Add("short\n")
	f.Add("alice 0123456789abcdef0123456789abcdef\nalice fedcba9876543210fedcba9876543210\n")
	f.Add("alice 0123456789abcdef0123456789abcdef extra\n")
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, text string) {
		path := filepath.Join(dir, "tokens")
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		entries, warnings, err := readTokenFile(path)
		secrets := tokensOf(text, path)
		said := strings.Join(warnings, "\n")
		if err != nil {
			if !errors.Is(err, ErrTokenFile) || !strings.Contains(err.Error(), path) {
				t.Fatalf("the error %q does not wrap ErrTokenFile or name the file", err)
			}
			said += "\n" + err.Error()
		}
		for _, s := range secrets {
			if strings.Contains(said, s) {
				t.Fatalf("a token (%q) is in what the reader says: %s", s, said)
			}
		}
		if err == nil {
			checkTokenEntries(t, text, entries)
		}
	})
}

// tokensOf returns the words of text in a token's place that are long enough to be told
// apart from the prose of a message and appear in no name (as it is or quoted) and not in the
// path.
func tokensOf(text, path string) []string {
	var names, tokens []string
	for line := range strings.SplitSeq(text, "\n") {
		fields := strings.Fields(line)
		switch {
		case len(fields) == 0 || strings.HasPrefix(strings.TrimSpace(line), "#"):
		case len(fields) == 1:
			tokens = append(tokens, fields[0])
		default:
			names = append(names, fields[0])
			tokens = append(tokens, fields[1])
		}
	}
	shown := path // what a message may show besides tokens: the path and the names, as quoted
	for _, n := range names {
		shown += "\n" + n + fmt.Sprintf("\n%q\n%q", n, clip(n, 80))
	}
	var out []string
	for _, tok := range tokens {
		if len(tok) >= 12 && !strings.Contains(shown, tok) {
			out = append(out, tok)
		}
	}
	return out
}

func checkTokenEntries(t *testing.T, text string, entries []namedToken) {
	t.Helper()
	lines := 0
	for line := range strings.SplitSeq(text, "\n") {
		if l := strings.TrimSpace(line); l != "" && !strings.HasPrefix(l, "#") {
			lines++
		}
	}
	if len(entries) == 0 || len(entries) != lines {
		t.Fatalf("%d entries for %d token lines", len(entries), lines)
	}
	names, digests := map[string]bool{}, map[[sha256.Size]byte]bool{}
	for _, e := range entries {
		if names[e.name] || digests[e.digest] || !(e.name == DefaultTokenName || agentIDPattern.MatchString(e.name)) {
			t.Fatalf("entry %q: a repeated or invalid name, or a repeated token", e.name)
		}
		names[e.name], digests[e.digest] = true, true
	}
}

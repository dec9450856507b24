package domain

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestTruncate_CutsAtARuneBoundary(t *testing.T) {
	cases := []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exactly10!", 10, "exactly10!"},
		{"abcdefghijk", 3, "abc…"},
		{"añb", 2, "a…"}, // ñ is 2 bytes: cutting inside it keeps only "a"
		{"日本語", 4, "日…"}, // 3-byte runes
		{"🙂🙂", 5, "🙂…"},  // 4-byte runes
		{strings.Repeat("é", 50), 7, "ééé…"},
	}
	for _, c := range cases {
		got := Clip(c.in, c.n)
		if got != c.want {
			t.Errorf("truncate(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
		if !utf8.ValidString(got) {
			t.Errorf("truncate(%q, %d) = %q is not valid UTF-8", c.in, c.n, got)
		}
	}
}

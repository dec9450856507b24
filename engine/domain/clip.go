package domain

import "unicode/utf8"

// truncate clips s to at most n bytes for quoting in messages, cutting at a rune boundary so
// that the result stays valid UTF-8, and marks the cut with "…". Shorter strings come back
// unchanged.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

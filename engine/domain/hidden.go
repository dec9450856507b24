package domain

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/runenames"
)

// The text people read — the command line, watch, the dashboard — must say what it holds.
// Some characters do not show, or change how the text around them shows: a right-to-left
// override (U+202E) makes "txt.exe" read "exe.txt", a zero-width space makes two names that
// look alike differ, an escape (U+001B) drives the terminal. This file is the one place that
// knows them (Hidden) and the two rules that follow:
//
//   - names people read (mission and voyage titles, keys, escalation kinds; docs/mcp.md
//     "Text people read") refuse them: CheckName, naming the field, the character and where;
//   - free text from agents and people (briefs, summaries, progress, questions, output) is
//     never refused for them but shows them as escapes when displayed: Shown, which the
//     command line, watch and the dashboard (its generated shown.js) all use.

// hiddenTables are the Unicode tables of the Hidden characters: controls (Cc: C0, DEL and
// C1, which hold the terminal's escape sequences), format characters (Cf: the bidirectional
// controls of Bidi_Control, the zero-width space, joiners and no-break space, the word
// joiner, the soft hyphen, tag characters, …), the line and paragraph separators (Zl, Zp),
// and the other default-ignorable code points (Hangul fillers, the combining grapheme joiner,
// …), which show as nothing. Variation selectors stay allowed: they only pick the look of
// the character before them (the emoji form of ⚠️).
var hiddenTables = []*unicode.RangeTable{unicode.Cc, unicode.Cf, unicode.Zl, unicode.Zp,
	unicode.Other_Default_Ignorable_Code_Point}

// Hidden reports whether r is a character a reader cannot see or that changes how the text
// around it reads (hiddenTables).
func Hidden(r rune) bool {
	if r >= 0x20 && r < 0x7f { // printable ASCII, most of any text
		return false
	}
	return unicode.IsOneOf(hiddenTables, r)
}

// NameRule is the rule names follow, as refusals state it.
const NameRule = "control characters, bidirectional controls and invisible characters are not allowed"

// CodePoint names r for a message: "U+202E (RIGHT-TO-LEFT OVERRIDE)", "U+001B (a control
// character)".
func CodePoint(r rune) string {
	name := runenames.Name(r)
	switch {
	case unicode.Is(unicode.Cc, r):
		name = "a control character"
	case name == "" || strings.HasPrefix(name, "<"):
		name = "an unassigned or reserved character"
	}
	return fmt.Sprintf("U+%04X (%s)", r, name)
}

// CheckName refuses a name people read that holds a Hidden character: a *FieldError naming
// field, the first such character and where it is (counted in characters from 1), the rule
// and what to do. what names the kind of name, plural ("titles", "keys").
func CheckName(field, what, s string) error {
	at := 0
	for _, r := range s {
		at++
		if Hidden(r) {
			return Invalid(field, fmt.Sprintf("contains %s at character %d: %s in %s", CodePoint(r), at, NameRule, what), "remove it")
		}
	}
	return nil
}

// Shown is s as it is displayed to people: every Hidden character is written as an escape
// such as <U+202E> (four hex digits or more, upper case), except newline and tab, and a
// carriage return that ends a line (CR LF), which multi-line text keeps; bytes that are not
// UTF-8 show as U+FFFD. Nothing else changes, so text without such characters comes back as
// it is, and Shown of Shown is Shown. The stored text stays as it was written: JSON answers
// (MCP tools, --json, the dashboard's API) carry it whole.
func Shown(s string) string {
	if !needsEscape(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i, r := range s {
		switch {
		case r == utf8.RuneError:
			b.WriteRune(r)
		case keptControl(s, i, r):
			b.WriteRune(r)
		case Hidden(r):
			fmt.Fprintf(&b, "<U+%04X>", r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// needsEscape reports whether Shown changes s.
func needsEscape(s string) bool {
	for i, r := range s {
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(s[i:]); size == 1 {
				return true
			}
			continue
		}
		if Hidden(r) && !keptControl(s, i, r) {
			return true
		}
	}
	return false
}

// keptControl reports whether the control r at byte i of s is one that displayed text keeps:
// a newline, a tab, or a carriage return followed by a newline.
func keptControl(s string, i int, r rune) bool {
	return r == '\n' || r == '\t' || r == '\r' && i+1 < len(s) && s[i+1] == '\n'
}

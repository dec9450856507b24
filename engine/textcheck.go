package engine

import (
	"fmt"
	"unicode/utf8"

	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// textProblem names what is wrong with a mission's free text s, its brief ("" when nothing):
// bytes that are not UTF-8, or a control character, with the byte offset where it is
// (0-based). A multiline text may hold newlines, tabs and carriage returns; a one-line text
// none. Escapes and bells are refused because the text is shown on terminals and pages; the
// other characters people cannot see are kept and shown escaped (domain.Shown).
func textProblem(s string, multiline bool) string {
	if p := utf8Problem(s); p != "" {
		return p
	}
	for i, r := range s {
		if isControl(r, multiline) {
			return fmt.Sprintf("holds control character U+%04X at byte %d; %s", r, i, allowedControls(multiline))
		}
	}
	return ""
}

// utf8Problem says where s is not valid UTF-8 ("" when it is).
func utf8Problem(s string) string {
	for i, r := range s {
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(s[i:]); size == 1 {
				return fmt.Sprintf("is not valid UTF-8 (byte 0x%02x at byte %d)", s[i], i)
			}
		}
	}
	return ""
}

// checkTitle refuses a mission's or voyage's title that is not UTF-8 or holds a character
// people cannot see (domain.CheckName: controls, bidirectional controls, invisible
// characters), naming field.
func checkTitle(field, title string) error {
	if p := utf8Problem(title); p != "" {
		return domain.Invalid(field, p, "give the title as one line of plain text; put details in brief")
	}
	return domain.CheckName(field, "titles", title)
}

// isControl reports whether r is a control character a text may not hold (C0 or DEL;
// multiline allows newline, tab and carriage return).
func isControl(r rune, multiline bool) bool {
	if r >= 0x20 && r != 0x7f {
		return false
	}
	return !multiline || (r != '\n' && r != '\t' && r != '\r')
}

// allowedControls says which control characters a text may hold.
func allowedControls(multiline bool) string {
	if multiline {
		return "only newline, tab and carriage return are allowed"
	}
	return "none is allowed (it is one line)"
}

// hasControl reports whether s holds a control character (NUL included); multiline allows
// newlines and tabs.
func hasControl(s string, multiline bool) bool {
	for _, r := range s {
		if isControl(r, multiline) {
			return true
		}
	}
	return false
}

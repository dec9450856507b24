package domain

import (
	"errors"
	"testing"
	"unicode"
)

// The characters issue 28 names, and every bidirectional control, are Hidden; letters,
// emoji with their variation selector, no-break spaces and U+FFFD are not.
func TestHidden_TheBidiControlsZeroWidthAndControlCharacters(t *testing.T) {
	for _, r := range []rune{0x061C, 0x200E, 0x200F, 0x202A, 0x202B, 0x202C, 0x202D, 0x202E, 0x2066, 0x2067, 0x2068, 0x2069,
		0x200B, 0x200C, 0x200D, 0x2060, 0xFEFF, 0x00AD, 0x3164, 0x2028, 0x2029, 0xE0041,
		0x00, 0x07, '\n', '\t', '\r', 0x1B, 0x7F, 0x85, 0x9B} {
		if !Hidden(r) {
			t.Errorf("%U is not Hidden", r)
		}
	}
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if unicode.Is(unicode.Bidi_Control, r) && !Hidden(r) {
			t.Errorf("bidirectional control %U is not Hidden", r)
		}
	}
	for _, r := range "aZ09 ~é日🙂\uFE0F\u00A0\u3000\uFFFD→" {
		if Hidden(r) {
			t.Errorf("%U %q is Hidden", r, r)
		}
	}
}

func TestCheckName_NamesTheFieldTheCharacterAndWhere(t *testing.T) {
	if err := CheckName("title", "titles", "Fix the parser ⚠️ (é, 日本)"); err != nil {
		t.Fatalf("a plain title is refused: %v", err)
	}
	err := CheckName("title", "titles", "abcd\u202Eexe.txt")
	var fe *FieldError
	if !errors.As(err, &fe) || !errors.Is(err, ErrInvalid) || fe.Field != "title" {
		t.Fatalf("not a field error on title: %#v", err)
	}
	want := "title: contains U+202E (RIGHT-TO-LEFT OVERRIDE) at character 5: control characters, bidirectional controls and invisible characters are not allowed in titles (remove it)"
	if err.Error() != want {
		t.Fatalf("got  %s\nwant %s", err, want)
	}
	for in, want := range map[string]string{
		"a\u200Bb": "key: contains U+200B (ZERO WIDTH SPACE) at character 2: ",
		"日本\u200D": "key: contains U+200D (ZERO WIDTH JOINER) at character 3: ",
		"\x1b[31m": "key: contains U+001B (a control character) at character 1: ",
		"x\u2065":  "key: contains U+2065 (an unassigned or reserved character) at character 2: ",
	} {
		if err := CheckName("key", "keys", in); err == nil || err.Error()[:len(want)] != want {
			t.Errorf("CheckName(%q) = %v, want it to start with %q", in, err, want)
		}
	}
}

func TestShown_EscapesWhatDoesNotShowAndKeepsTheRest(t *testing.T) {
	for in, want := range map[string]string{
		"plain text, é 日本 🙂":          "plain text, é 日本 🙂",
		"abc\u202Etxt.exe":            "abc<U+202E>txt.exe",
		"a\u200Bb\u200Dc\uFEFF":       "a<U+200B>b<U+200D>c<U+FEFF>",
		"\x1b[2J\x1b]0;pwned\x07":     "<U+001B>[2J<U+001B>]0;pwned<U+0007>",
		"c1 \u009b31m":                "c1 <U+009B>31m",
		"line one\n\tline two\r\nend": "line one\n\tline two\r\nend",
		"over\rwritten":               "over<U+000D>written",
		"ends in cr\r":                "ends in cr<U+000D>",
		"tag \U000E0041":              "tag <U+E0041>",
		"not utf-8 \xff!":             "not utf-8 \uFFFD!",
		"<U+202E> written out":        "<U+202E> written out",
	} {
		got := Shown(in)
		if got != want {
			t.Errorf("Shown(%q) = %q, want %q", in, got, want)
		}
		if again := Shown(got); again != got {
			t.Errorf("Shown is not idempotent on %q: %q", got, again)
		}
	}
}

// Text with nothing to escape is returned as it is, without a copy (watch and the command
// line call Shown on every line they draw).
func TestShown_CleanTextIsNotCopied(t *testing.T) {
	s := "a clean line of text, é"
	if got := Shown(s); got != s || testing.AllocsPerRun(100, func() { _ = Shown(s) }) != 0 {
		t.Fatalf("Shown copied clean text")
	}
}

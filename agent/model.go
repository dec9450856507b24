package agent

import (
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"
)

// MaxModelLen is the longest model name accepted, in bytes.
const MaxModelLen = 128

// modelChars are the characters a model name may use: letters, digits and . _ - : / @ + [ ],
// enough for every provider's naming ("claude-opus-4-8", "gpt-5.5", "sonnet[1m]",
// "us.anthropic.claude-3-7-sonnet-20250219-v1:0", "claude-sonnet-4-5@20250929",
// "openrouter/anthropic/claude-3.5", "llama3:8b"). The first must be a letter or digit.
var modelChars = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:/@+\[\]-]*$`)

// CheckModel reports why name cannot be a model name, or nil. A model name reaches an
// agent's command line (--model=<name>) and its configuration files, so it must never read
// as an option (a leading "-"), hold a control character or invalid UTF-8, or be longer than
// MaxModelLen bytes. The error says what is wrong and what to send instead; callers prefix
// the field that carried it.
func CheckModel(name string) error {
	const hint = "use the provider's model id, such as claude-sonnet-4-5 or gpt-5.5: letters, digits and . _ - : / @ + [ ], starting with a letter or digit"
	switch {
	case name == "":
		return fmt.Errorf("is empty (%s)", hint)
	case len(name) > MaxModelLen:
		return fmt.Errorf("is %d bytes long, over the limit of %d (%s)", len(name), MaxModelLen, hint)
	case !utf8.ValidString(name):
		return fmt.Errorf("is not valid UTF-8 (%s)", hint)
	case strings.HasPrefix(name, "-"):
		return fmt.Errorf("%q starts with \"-\", which an agent's command line would read as an option (%s)", name, hint)
	case strings.ContainsFunc(name, isControl):
		return fmt.Errorf("%q holds a control character (%s)", name, hint)
	case !modelChars.MatchString(name):
		return fmt.Errorf("%q is not a model name (%s)", name, hint)
	}
	return nil
}

// isControl reports C0 and C1 control characters and DEL.
func isControl(r rune) bool { return r < 0x20 || (r >= 0x7f && r < 0xa0) }

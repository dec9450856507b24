package engine

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestTextProblem_NamesTheCharacterAndWhere(t *testing.T) {
	require.Empty(t, textProblem("plain text, é ok\n\ttab", true))
	require.Equal(t, "holds control character U+001B at byte 1; only newline, tab and carriage return are allowed", textProblem("a\x1bb", true))
	require.Equal(t, "holds control character U+000A at byte 2; none is allowed (it is one line)", textProblem("é\nx", false))
	require.Equal(t, "is not valid UTF-8 (byte 0xff at byte 2)", textProblem("ab\xffc", true))
	require.Empty(t, textProblem("\uFFFD is a real character", false), "U+FFFD written out is valid UTF-8")
}

package main

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// A brief or title with a control character is refused with what is wrong and where, not
// with a size rule it does not break (trial of issue 16), and nothing is created.
func TestCLI_GoRefusesControlCharactersByName(t *testing.T) {
	s := newSandbox(t)
	_, errOut, code := s.cli("go", "ok title", "--brief", "a\x1bb")
	require.Equal(t, 2, code, errOut)
	require.Contains(t, errOut, "--brief: holds control character U+001B at byte 1; only newline, tab and carriage return are allowed")
	require.NotContains(t, errOut, "262144")
	_, errOut, code = s.cli("go", "bell\x07here")
	require.Equal(t, 2, code, errOut)
	require.Contains(t, errOut, "TITLE: contains U+0007 (a control character) at character 5: ", "a title is a name: the rule for names (issue 28)")
	_, errOut, code = s.cli("go", "ok title", "--brief", "a\x7f")
	require.Equal(t, 2, code, errOut)
	require.Contains(t, errOut, "--brief: holds control character U+007F at byte 1")
	require.Empty(t, cliJSON[[]domain.Mission](s, "missions", "list"), "nothing was created")
	m := cliJSON[domain.Mission](s, "go", "multi-line brief", "--brief", "line one\n\tline two\r\n")
	require.Equal(t, domain.StatePending, m.State, "newline, tab and carriage return stay allowed")
}

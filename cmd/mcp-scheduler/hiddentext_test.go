package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/storage/teststore"
)

// hiddenChars are the characters a display must never print as themselves in these tests.
const hiddenChars = "\u202E\u200B\u200D\x1b"

// Issue 28 on the command line: a title with a right-to-left override or a zero-width
// character is a usage mistake (exit 2) naming the argument, the character and where, and
// nothing is created; `missions update --title` the same, naming the flag.
func TestCLI_TitleRefusesHiddenCharacters(t *testing.T) {
	s := newSandbox(t)
	_, errOut, code := s.cli("go", "abcd\u202Eexe.txt")
	require.Equal(t, 2, code, errOut)
	require.Contains(t, errOut, "TITLE: contains U+202E (RIGHT-TO-LEFT OVERRIDE) at character 5: control characters, bidirectional controls and invisible characters are not allowed in titles (remove it)")
	require.NotContains(t, errOut, "\u202E", "the refusal shows no hidden character itself")
	require.Empty(t, cliJSON[[]domain.Mission](s, "missions", "list"), "nothing was created")

	m := cliJSON[domain.Mission](s, "go", "plain title")
	_, errOut, code = s.cli("missions", "update", m.ID, "--title", "zero\u200Bwidth")
	require.Equal(t, 2, code, errOut)
	require.Contains(t, errOut, "--title: contains U+200B (ZERO WIDTH SPACE) at character 5: ")
	require.Equal(t, "plain title", cliJSON[domain.Mission](s, "missions", "update", m.ID, "--priority", "5").Title)
}

// A brief (free text: kept as written) and a title stored before the rule display escaped in
// `missions show` and `missions list`, and --json gives both back as stored: nothing is lost.
func TestCLI_ShowEscapesHiddenCharacters(t *testing.T) {
	s := newSandbox(t)
	brief := "rename report\u202Etxt.exe\nthen\u200Bdone"
	m := cliJSON[domain.Mission](s, "go", "plain title", "--brief", brief)
	require.Equal(t, brief, m.Brief, "a brief keeps what it holds")
	st := teststore.OpenAt(t, filepath.Join(s.dataDir, "mcp-scheduler.db"))
	legacy := "old\u202Etitle\u200D"
	teststore.WriteMissionTitle(t, st, m.ID, legacy)

	out, errOut, code := s.cli("missions", "show", m.ID)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, m.ID+"  old<U+202E>title<U+200D>\n")
	require.Contains(t, out, "\nbrief:\nrename report<U+202E>txt.exe\nthen<U+200B>done\n", "multi-line text keeps its lines")
	require.False(t, strings.ContainsAny(out, hiddenChars), "missions show printed a hidden character: %q", out)

	out, errOut, code = s.cli("missions", "list")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "old<U+202E>title<U+200D>")
	require.False(t, strings.ContainsAny(out, hiddenChars), "missions list printed a hidden character: %q", out)

	d := cliJSON[engine.MissionDetail](s, "missions", "show", m.ID)
	require.Equal(t, legacy, d.Mission.Title, "--json gives the text as stored")
	require.Equal(t, brief, d.Mission.Brief)
}

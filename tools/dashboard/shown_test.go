package dashboard_test

import (
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/e2e/testenv"
	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/storage/teststore"
	"github.com/mcp-scheduler/mcp-scheduler/tools"
	"github.com/mcp-scheduler/mcp-scheduler/tools/dashboard"
)

// TestShownJS_AgreesWithTheGoRule: the pages' shown() (web/shown.js with the server's
// generated hidden.js, both as served) writes every Unicode scalar value, and the texts that
// keep or escape a carriage return, exactly as domain.Shown does for the command line and
// watch. Runs the served modules in node (no browser needed).
func TestShownJS_AgreesWithTheGoRule(t *testing.T) {
	node := testenv.LookPath(t, "node")
	f := start(t, "")
	dir := t.TempDir()
	for _, name := range []string{"shown.js", "hidden.js"} {
		code, body, h := f.do(http.MethodGet, "/assets/"+name, "", nil)
		require.Equal(t, http.StatusOK, code, body)
		require.Contains(t, h.Get("Content-Type"), "javascript")
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644))
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "package.json"), []byte(`{"type": "module"}`), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "run.js"), []byte(`import { shown } from './shown.js';
let input = '';
process.stdin.setEncoding('utf8');
for await (const chunk of process.stdin) input += chunk;
process.stdout.write(JSON.stringify(JSON.parse(input).map(shown)));
`), 0o644))

	var every strings.Builder
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if r < 0xD800 || r > 0xDFFF { // surrogates are no characters of a UTF-8 text
			every.WriteRune(r)
		}
	}
	texts := []string{every.String(), "a\r\nb\rc\r", "\r\n\r\n", "title \u202Eexe.txt", "\x1b[31mred", "plain, é 日本 🙂⚠️", ""}
	in, err := json.Marshal(texts)
	require.NoError(t, err)
	cmd := exec.CommandContext(f.ctx, node, filepath.Join(dir, "run.js"))
	cmd.Stdin = strings.NewReader(string(in))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, stderr.String())
	var got []string
	require.NoError(t, json.Unmarshal(out, &got))
	require.Len(t, got, len(texts))
	for i, text := range texts {
		if want := domain.Shown(text); got[i] != want {
			t.Errorf("text %d: shown.js and domain.Shown differ at byte %d", i, firstDiff(got[i], want))
		}
	}
	require.Equal(t, "title <U+202E>exe.txt", got[3])
}

func firstDiff(a, b string) int {
	for i := 0; i < min(len(a), len(b)); i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// TestAPI_KeepsTheStoredTextWhole: the API answers text as it is stored, hidden characters
// and all (the page escapes it where it shows it): a title stored before the rule for names,
// a progress message and a failure summary of an agent.
func TestAPI_KeepsTheStoredTextWhole(t *testing.T) {
	f, m := hiddenTextMission(t)
	var p dashboard.MissionPage
	f.getJSON("/api/missions/"+m.ID, &p)
	require.Equal(t, legacyTitle, p.Mission.Title)
	require.Equal(t, progressText, p.Mission.Progress.Message)
}

const (
	legacyTitle  = "report\u202Etxt.exe"
	progressText = "halfway\u200B there \x1b[31mred"
)

// hiddenTextMission serves a mission whose title was stored before the rule for names with a
// right-to-left override, running with a progress message that holds a zero-width space and
// a terminal escape.
func hiddenTextMission(t *testing.T) (*fixture, domain.Mission) {
	t.Helper()
	dir := t.TempDir()
	st := teststore.OpenAt(t, teststore.LocationIn(dir))
	eng := engine.New(st, engine.Options{DefaultRepository: dir})
	f := serve(t, "", dir, tools.Deps{Engine: eng, Logs: tools.FileLogs{DataDir: dir}})
	c, err := f.eng.CreateMission(f.ctx, engine.MissionSpec{Title: "report", WriteArea: []string{"r/**"}}, "test")
	require.NoError(t, err)
	teststore.WriteMissionTitle(t, st, c.Mission.ID, legacyTitle)
	m := f.run(c.Mission.ID)
	require.NoError(t, f.eng.Progress(f.ctx, m.Fence(), nil, progressText))
	return f, m
}

// TestBrowser_ShowsHiddenCharactersAsEscapes: in a real Chromium the mission page shows the
// stored title's right-to-left override and the progress message's zero-width space and
// escape as <U+…> escapes, never the characters themselves. Screenshot hidden-text.png.
func TestBrowser_ShowsHiddenCharactersAsEscapes(t *testing.T) {
	f, m := hiddenTextMission(t)
	b := startBrowser(t, f, "shown.mjs", "MISSION="+m.ID, "TITLE="+domain.Shown(legacyTitle), "PROGRESS="+domain.Shown(progressText))
	for s := b.step(); s != ""; s = b.step() {
	}
	b.finish(1)
}

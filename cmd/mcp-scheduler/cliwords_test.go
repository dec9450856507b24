package main

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/storage/teststore"
	"github.com/mcp-scheduler/mcp-scheduler/tools"
)

// registeredTools returns every MCP tool the server registers, by name, with the names of
// its input schema's properties.
func registeredTools(t *testing.T) map[string][]string {
	t.Helper()
	st := teststore.OpenAt(t, teststore.LocationIn(t.TempDir()))
	eng := engine.New(st, engine.Options{})
	srv, err := tools.New(tools.Deps{Engine: eng}, tools.Options{Version: "test"})
	require.NoError(t, err)
	out := map[string][]string{}
	for _, tool := range srv.Tools() {
		var schema struct {
			Properties map[string]json.RawMessage `json:"properties"`
		}
		require.NoError(t, json.Unmarshal(tool.Tool.RawInputSchema, &schema), tool.Tool.Name)
		var props []string
		for p := range schema.Properties {
			props = append(props, p)
		}
		out[tool.Tool.Name] = props
	}
	return out
}

// findCommand returns the command at path ("mcp-scheduler missions list"), failing when the
// tree has none there.
func findCommand(t *testing.T, root *cobra.Command, path string) *cobra.Command {
	t.Helper()
	cmd, rest, err := root.Find(strings.Fields(path)[1:])
	require.NoError(t, err, path)
	require.Empty(t, rest, path)
	require.Equal(t, path, cmd.CommandPath(), "%s is a command", path)
	return cmd
}

// Every MCP tool has an entry in toolCommands (a new tool makes someone decide how the
// command line names it), and every command named there exists.
func TestCLIWords_EveryToolHasAnEntry(t *testing.T) {
	t.Parallel()
	root := newRootCmd(&app{})
	registered := registeredTools(t)
	require.NotEmpty(t, registered)
	var missing []string
	for name := range registered {
		if _, ok := toolCommands[name]; !ok {
			missing = append(missing, name)
		}
	}
	require.Empty(t, missing, "tools with no entry in toolCommands (cliwords.go): give each its command, or \"\" for none")
	for tool, path := range toolCommands {
		_, ok := registered[tool]
		require.True(t, ok, "toolCommands names %s, which is no tool", tool)
		if path != "" {
			findCommand(t, root, path)
		}
	}
}

// Every flag of a command whose values reach an engine operation is either the flag of an
// engine field in flagFields or one the command line decides alone (cliOnlyFlags); every
// flag named exists; every field is an argument of the command's tool.
func TestCLIWords_EveryFlagBackedFieldHasAnEntry(t *testing.T) {
	t.Parallel()
	root := newRootCmd(&app{})
	registered := registeredTools(t)
	for path, fields := range flagFields {
		cmd := findCommand(t, root, path)
		carried := map[string]bool{}
		for field, flag := range fields {
			if name, ok := strings.CutPrefix(flag, "--"); ok {
				require.NotNil(t, cmd.Flags().Lookup(name), "%s: flagFields names --%s, which it does not have", path, name)
				carried[name] = true
			} else {
				require.Contains(t, cmd.Use, flag, "%s: %s is not an argument of %q", path, flag, cmd.Use)
			}
			tool := commandTools[path]
			if tool == "" && !strings.HasPrefix(flag, "--") && strings.HasSuffix(field, "_id") {
				continue // a command with no tool names the id argument it checks itself
			}
			require.NotEmpty(t, tool, "%s has no tool in commandTools", path)
			require.Contains(t, registered[tool], field, "%s: %s is not an argument of %s", path, field, tool)
		}
		for _, name := range cliOnlyFlags[path] {
			carried[name] = true
		}
		cmd.LocalNonPersistentFlags().VisitAll(func(f *pflag.Flag) {
			require.True(t, carried[f.Name], "%s --%s: add the engine field it carries to flagFields, or the flag to cliOnlyFlags (cliwords.go)", path, f.Name)
		})
	}
}

// The engine's messages come out in the command line's words: flags and arguments instead of
// JSON fields, commands instead of tool names; a bad flag value is a usage mistake (exit 2)
// whichever check found it, and the same words and code for every out-of-range value.
func TestCLI_ErrorsNameFlagsAndCommands(t *testing.T) {
	s := newSandbox(t)
	missing := "msn_01JD5Z8Q6X3V4W5Y6Z7A8B9C0D"
	cases := []struct {
		args     []string
		code     int
		contains []string
	}{
		{[]string{"go", "x", "--depends-on", "bad"}, 2, []string{`--depends-on (value 1): "bad" is not a mission id`, "mcp-scheduler missions list"}},
		{[]string{"go", "x", "--depends-on", missing}, 1, []string{"--depends-on (value 1): unknown mission: " + missing + " does not exist", "mcp-scheduler missions list"}},
		{[]string{"go", "x", "--priority", "0"}, 2, []string{"--priority: 0 is out of range (use 1 (urgent) to 1000; the default is 100)"}},
		{[]string{"go", "x", "--priority", "1001"}, 2, []string{"--priority: 1001 is out of range (use 1 (urgent) to 1000; the default is 100)"}},
		{[]string{"go", "x", "--priority", "-3"}, 2, []string{"--priority: -3 is out of range"}},
		{[]string{"go", " "}, 2, []string{"TITLE: is empty"}},
		{[]string{"go", "x", "--voyage", "vyg_nope"}, 2, []string{`--voyage: "vyg_nope" is not a voyage id`}},
		{[]string{"go", "x", "--write-area", "../x"}, 2, []string{"--write-area"}},
		{[]string{"missions", "list", "--state", "sleepy"}, 2, []string{"--state: unknown state sleepy"}},
		{[]string{"missions", "--state", "sleepy"}, 2, []string{"--state: unknown state sleepy"}},
		{[]string{"missions", "show", missing}, 1, []string{"mission " + missing + " not found (list them with mcp-scheduler missions list / mcp-scheduler voyages show)"}},
		{[]string{"missions", "retry", "nope"}, 2, []string{`MISSION_ID: "nope" is not a mission id`}},
		{[]string{"escalations", "list", "--mission", "nope"}, 2, []string{`--mission: "nope" is not a mission id`}},
		{[]string{"events", "--voyage", "nope"}, 2, []string{`--voyage: "nope" is not a voyage id`}},
		{[]string{"voyages", "show", "nope"}, 2, []string{`VOYAGE_ID: "nope" is not a voyage id`}},
		{[]string{"missions", "show", "list_missions"}, 2, []string{`MISSION_ID: "list_missions" is not a mission id`, "copy one from mcp-scheduler missions list"}},
	}
	for _, c := range cases {
		_, errs, code := s.cli(c.args...)
		require.Equal(t, c.code, code, "%v: %s", c.args, errs)
		for _, want := range c.contains {
			require.Contains(t, errs, want, c.args)
		}
		unquoted := regexp.MustCompile(`"[^"]*"`).ReplaceAllString(errs, `""`) // what the user typed stays
		for tool, command := range toolCommands {
			if command != "" {
				require.NotRegexp(t, `\b`+tool+`\b`, unquoted, "%v names a tool", c.args)
			}
		}
		for _, field := range []string{"depends_on", "voyage_id", "mission_id", "states", "priority:"} {
			require.NotContains(t, errs, "mcp-scheduler: "+field, "%v names a JSON field", c.args)
		}
	}
}

// A command-line mistake creates, migrates and changes nothing: no data dir appears and no
// storage log line is printed before the refusal.
func TestCLI_UsageErrorsTouchNothing(t *testing.T) {
	s := newSandbox(t)
	for _, args := range [][]string{
		{"frobnicate"}, {"go"}, {"go", "x", "--priority", "0"}, {"go", "x", "--priority", "1001"},
		{"go", "x", "--depends-on", "bad"}, {"missions", "--limit", "0"}, {"missions", "show", "x"},
		{"missions", "list", "--state", "nope"}, {"escalations", "--limit", "5000"},
		{"escalations", "resolve", "esc_x", "--action", "retry"}, {"events", "--limit", "0"},
		{"voyages", "--state", "sailing"}, {"voyages", "cancel", "x"}, {"missions", "frobnicate"},
	} {
		_, errs, code := s.cli(args...)
		require.Equal(t, 2, code, "%v: %s", args, errs)
		require.NotContains(t, errs, "migrated", args)
		require.Equal(t, 1, strings.Count(errs, "\n"), "%v: one line, the refusal: %q", args, errs)
		_, err := os.Stat(s.dataDir)
		require.ErrorIs(t, err, os.ErrNotExist, "%v created the data dir", args)
	}
}

// missions and escalations without a subcommand list, with the list's flags.
func TestCLI_GroupsListByDefault(t *testing.T) {
	s := newSandbox(t)
	m := cliJSON[domain.Mission](s, "go", "listed")
	out, errs, code := s.cli("missions")
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, m.ID)
	require.Equal(t, []domain.Mission{}, cliJSON[[]domain.Mission](s, "missions", "--state", "failed"))
	require.Len(t, cliJSON[[]domain.Mission](s, "missions", "--state", "pending"), 1)
	out, errs, code = s.cli("escalations")
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "REASON")
	require.Equal(t, []domain.Escalation{}, cliJSON[[]domain.Escalation](s, "escalations", "--all"))
	out, errs, code = s.cli("voyages")
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "TITLE")
}

// Piped (not a terminal), a table prints every cell whole, tab-separated; on a terminal it
// aligns and cuts long cells.
func TestCLI_PipedTablesAreComplete(t *testing.T) {
	s := newSandbox(t)
	title := strings.Repeat("a long title that goes on ", 6) + "and ends here"
	m := cliJSON[domain.Mission](s, "go", title)
	out, _, code := s.cli("missions", "list")
	require.Equal(t, 0, code)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 2)
	require.Equal(t, []string{"ID", "STATE", "LANDING", "PRIO", "ATTEMPT", "OWNER", "UPDATED", "TITLE"}, strings.Split(lines[0], "\t"))
	cells := strings.Split(lines[1], "\t")
	require.Len(t, cells, 8)
	require.Equal(t, m.ID, cells[0])
	require.Equal(t, title, cells[7], "the whole title")

	var b strings.Builder
	tt := newTableFor(&b, true, "ID", "TITLE")
	tt.row(m.ID, title)
	require.NoError(t, tt.flush())
	require.NotContains(t, b.String(), "\t", "aligned with spaces")
	require.Contains(t, b.String(), "…", "cut to fit a screen")
	require.NotContains(t, b.String(), "ends here")
}

// voyages list, show and cancel work on a voyage dispatched by an MCP client, through the
// same engine operations as voyage_status and cancel_voyage.
func TestCLI_Voyages(t *testing.T) {
	s := newSandbox(t)
	p := s.start(nil, "serve")
	p.send(initialize)
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	p.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"dispatch","arguments":{"title":"ship it","missions":[{"key":"a","title":"first"},{"key":"b","title":"second","depends_on":["a"]}]}}}`)
	var vid string
	for vid == "" {
		m := parseRPC(t, p.next())
		if string(m.ID) == "2" {
			require.Nil(t, m.Error)
			var res struct {
				StructuredContent struct {
					Voyage domain.Voyage `json:"voyage"`
				} `json:"structuredContent"`
			}
			require.NoError(t, json.Unmarshal(m.Result, &res))
			vid = res.StructuredContent.Voyage.ID
			require.NotEmpty(t, vid, string(m.Result))
		}
	}
	require.NoError(t, p.stdin.Close())
	require.Equal(t, 0, p.wait())

	vs := cliJSON[[]domain.Voyage](s, "voyages", "list")
	require.Len(t, vs, 1)
	require.Equal(t, vid, vs[0].ID)
	out, errs, code := s.cli("voyages")
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, vid+"\t")
	require.Contains(t, out, "ship it")
	require.Len(t, cliJSON[[]domain.Voyage](s, "voyages", "--state", "cancelled"), 0)

	out, errs, code = s.cli("voyages", "show", vid)
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, vid+"  ship it")
	require.Contains(t, out, "missions 2: pending 2")
	require.Contains(t, out, "hard_dependency", "the second waits for the first, and says so")
	d := cliJSON[engine.VoyageDetail](s, "voyages", "show", vid)
	require.Len(t, d.Missions, 2)

	v := cliJSON[domain.Voyage](s, "voyages", "cancel", vid, "--reason", "changed our minds")
	require.Equal(t, domain.VoyageCancelled, v.State)
	d = cliJSON[engine.VoyageDetail](s, "voyages", "show", vid)
	require.Equal(t, 2, d.Counts[domain.StateCancelled])
	out, _, _ = s.cli("events", "--voyage", vid, "--type", "voyage.cancelled")
	require.Contains(t, out, "voyage.cancelled")
	_, errs, code = s.cli("voyages", "show", "vyg_01JD5Z8Q6X3V4W5Y6Z7A8B9C0D")
	require.Equal(t, 1, code)
	require.Contains(t, errs, "voyage vyg_01JD5Z8Q6X3V4W5Y6Z7A8B9C0D not found")
}

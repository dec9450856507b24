package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/e2e/testenv"
	"github.com/mcp-scheduler/mcp-scheduler/engine"
)

// The tools the brief (§8) names; the registry must hold exactly these.
var briefTools = []string{"create_mission", "dispatch", "update_mission", "cancel_mission", "cancel_voyage",
	"retry_mission", "block_mission", "escalate", "list_escalations", "resolve_escalation", "approve_landing",
	"status", "get_mission", "list_missions", "voyage_status", "get_events", "get_mission_log",
	"get_mission_diff", "list_agents", "pause_scheduler", "resume_scheduler", "claim_mission", "heartbeat",
	"report_progress", "checkpoint_mission", "yield_mission", "complete_mission", "fail_mission"}

// extraTools are the tools the brief does not list that we added: update_voyage marks a
// voyage's requirements as changed (issue 6) and changes its cost limit.
var extraTools = []string{"update_voyage"}

// readOnlyTools are the tools that change nothing.
var readOnlyTools = []string{"list_escalations", "status", "get_mission", "list_missions", "voyage_status",
	"get_events", "get_mission_log", "get_mission_diff", "list_agents"}

func registry() []Tool { return AllTools(&Deps{}) }

func TestRegistry_ExactlyTheBriefsTools(t *testing.T) {
	var names []string
	for _, tl := range registry() {
		names = append(names, tl.Tool.Name)
	}
	require.ElementsMatch(t, append(slices.Clone(briefTools), extraTools...), names)
}

func TestRegistry_Invariants(t *testing.T) {
	// What Claude Desktop and Claude Code accept (bugs.md B04); ours is stricter.
	hostPattern := regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)
	seen := map[string]bool{}
	for _, tl := range registry() {
		name := tl.Tool.Name
		t.Run(name, func(t *testing.T) {
			require.NoError(t, tl.Validate())
			require.Regexp(t, namePattern, name)
			require.Regexp(t, hostPattern, "mcp__mcp-scheduler__"+name, "the host's prefixed name stays valid")
			require.False(t, seen[name], "unique name")
			seen[name] = true
			require.GreaterOrEqual(t, len(tl.Tool.Description), 60, "a description written for a model")
			require.NotEmpty(t, tl.Tool.Annotations.Title)
			a := tl.Tool.Annotations
			require.False(t, *a.OpenWorldHint, "every tool works on the scheduler's own state")
			ro := slices.Contains(readOnlyTools, name)
			require.Equal(t, ro, *a.ReadOnlyHint, "readOnlyHint")
			if ro {
				require.False(t, *a.DestructiveHint)
				require.True(t, *a.IdempotentHint)
			}
			for kind, raw := range map[string][]byte{"input": tl.Tool.RawInputSchema, "output": tl.Tool.RawOutputSchema} {
				var top map[string]any
				require.NoError(t, json.Unmarshal(raw, &top), kind)
				require.Equal(t, "object", top["type"], "%s schema is an object", kind)
				for _, k := range []string{"anyOf", "oneOf", "allOf", "not"} {
					require.NotContains(t, top, k, "%s schema has no top-level %s (clients reject it)", kind, k)
				}
				c := jsonschema.NewCompiler()
				doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
				require.NoError(t, err)
				require.NoError(t, c.AddResource("mem:///s.json", doc))
				_, err = c.Compile("mem:///s.json")
				require.NoError(t, err, "%s schema compiles", kind)
			}
			require.NotContains(t, string(tl.Tool.RawInputSchema), `"null"`, "input schemas never allow null")
		})
	}
}

// TestB04_InvalidToolNamesAreRefused: a tool whose name a host would refuse (dots, spaces,
// upper case, too long) fails validation, and New refuses a registry containing one, so such
// a server never starts (bugs.md B04).
func TestB04_InvalidToolNamesAreRefused(t *testing.T) {
	for _, bad := range []string{"task.create", "Create Task", "CreateTask", "", string(bytes.Repeat([]byte("a"), 65)), "tâche"} {
		tl := newTool(toolSpec{name: bad, title: "x", description: "a tool with a bad name", effect: ReadOnly,
			input: inputSchema[NoArgs](), output: outputSchema[Recorded](), handler: handle(func(_ context.Context, _ mcp.CallToolRequest, _ NoArgs) (Recorded, error) { return Recorded{}, nil })})
		require.Error(t, tl.Validate(), "%q", bad)
		st := newStoreEngine(t)
		_, err := New(Deps{Engine: st}, Options{ExtraTools: []Tool{tl}})
		require.ErrorContains(t, err, "must match", "%q", bad)
	}
	// Annotations inconsistent with the effect are refused too.
	tl := CreateMission(&Deps{})
	tl.Effect = ReadOnly
	require.ErrorContains(t, tl.Validate(), "annotations")
}

// TestB04_ToolsListNamesAreValid lists the tools over a real client and checks every name
// and input schema a host validates.
func TestB04_ToolsListNamesAreValid(t *testing.T) {
	b := setup(t, setupOpts{})
	res, err := b.client.ListTools(b.ctx, mcp.ListToolsRequest{})
	require.NoError(t, err)
	require.Len(t, res.Tools, len(briefTools)+len(extraTools))
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
		require.Regexp(t, `^[a-zA-Z0-9_-]{1,64}$`, tl.Name)
		raw, err := json.Marshal(tl)
		require.NoError(t, err)
		var m map[string]any
		require.NoError(t, json.Unmarshal(raw, &m))
		require.Equal(t, "object", m["inputSchema"].(map[string]any)["type"])
		require.Contains(t, m, "outputSchema")
		ann := m["annotations"].(map[string]any)
		for _, k := range []string{"readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"} {
			require.Contains(t, ann, k)
		}
	}
	require.ElementsMatch(t, append(slices.Clone(briefTools), extraTools...), names)
}

// TestSchemas_BoundsMatchTheEngine: the numeric bounds advertised in schemas are the
// engine's own limits.
func TestSchemas_BoundsMatchTheEngine(t *testing.T) {
	var s map[string]any
	require.NoError(t, json.Unmarshal(inputSchema[CreateMissionArgs](), &s))
	props := s["properties"].(map[string]any)
	prio := props["priority"].(map[string]any)
	require.EqualValues(t, engine.MinPriority, prio["minimum"])
	require.EqualValues(t, engine.MaxPriority, prio["maximum"])
	require.EqualValues(t, engine.MaxRetryBudget, props["retry_budget"].(map[string]any)["maximum"])
	require.EqualValues(t, engine.MaxTitleLen, props["title"].(map[string]any)["maxLength"])
	require.Equal(t, []any{"title"}, s["required"])
	var c map[string]any
	require.NoError(t, json.Unmarshal(inputSchema[ClaimArgs](), &c))
	require.EqualValues(t, engine.MaxClaimWait.Seconds(), c["properties"].(map[string]any)["wait_seconds"].(map[string]any)["maximum"])
	var d map[string]any
	require.NoError(t, json.Unmarshal(inputSchema[DispatchArgs](), &d))
	require.EqualValues(t, engine.MaxMissionsPerDispatch, d["properties"].(map[string]any)["missions"].(map[string]any)["maxItems"])
}

// snapshots: one JSON file per tool in __toolsnaps__ holding its public contract (name,
// description, annotations, input and output schema). A change fails the test until the
// snapshot is rewritten on purpose: UPDATE_TOOLSNAPS=true go test ./tools/ -run TestToolSnapshots
var updateSnaps = os.Getenv("UPDATE_TOOLSNAPS") == "true"

func TestToolSnapshots(t *testing.T) {
	dir := "__toolsnaps__"
	want := map[string]bool{}
	for _, tl := range registry() {
		name := tl.Tool.Name
		want[name+".snap"] = true
		got, err := json.MarshalIndent(tl.Tool, "", "  ")
		require.NoError(t, err)
		got = append(got, '\n')
		path := filepath.Join(dir, name+".snap")
		old, err := os.ReadFile(path)
		switch {
		case updateSnaps:
			require.NoError(t, os.MkdirAll(dir, 0o755))
			require.NoError(t, os.WriteFile(path, got, 0o644))
			continue
		case os.IsNotExist(err) && testenv.InCI():
			t.Fatalf("%s: no snapshot in CI; run UPDATE_TOOLSNAPS=true go test ./tools/ -run TestToolSnapshots and commit it", name)
		case os.IsNotExist(err):
			require.NoError(t, os.MkdirAll(dir, 0o755))
			require.NoError(t, os.WriteFile(path, got, 0o644))
			t.Logf("%s: snapshot written; commit it", path)
			continue
		}
		require.NoError(t, err)
		require.JSONEq(t, string(old), string(got), "tool %s changed its public contract: review, then UPDATE_TOOLSNAPS=true go test ./tools/ -run TestToolSnapshots", name)
	}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range entries {
		require.True(t, want[e.Name()], "stale snapshot %s: the tool no longer exists; delete it", e.Name())
	}
}

// TestToolSnapshots_DetectDrift proves the comparison catches a changed description.
func TestToolSnapshots_DetectDrift(t *testing.T) {
	tl := Status(&Deps{})
	old, err := os.ReadFile(filepath.Join("__toolsnaps__", "status.snap"))
	require.NoError(t, err)
	tl.Tool.Description += " (changed)"
	got, err := json.Marshal(tl.Tool)
	require.NoError(t, err)
	var a, b any
	require.NoError(t, json.Unmarshal(old, &a))
	require.NoError(t, json.Unmarshal(got, &b))
	require.NotEqual(t, fmt.Sprint(a), fmt.Sprint(b))
}

var _ = server.ServerTool{}

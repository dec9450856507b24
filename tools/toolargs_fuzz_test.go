package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
)

// fuzzTools are the tools FuzzToolArguments calls: those that create work and those an agent
// uses on a leased mission, where a bad argument must never change anything.
var fuzzTools = []string{"create_mission", "dispatch", "claim_mission", "heartbeat", "complete_mission",
	"fail_mission", "update_mission", "report_progress", "checkpoint_mission", "yield_mission", "cancel_mission", "retry_mission"}

// FuzzToolArguments calls real tool handlers (schema validation, argument binding and the
// engine's checks, over a real SQLite store and git repository) through an MCP client with
// arbitrary JSON as arguments. In the arguments "$M" is replaced by the id of a mission made
// for the call and "$R" by the configured repository, so that seeds reach past the id checks;
// a positive wait_seconds becomes 0 (a wait is not a refusal). Properties: no JSON-RPC error
// but -32600 or -32602 (a request refused before the tool ran, as text that is not UTF-8 is),
// never -32603 (a server fault: these are the client's arguments); a refusal, either way,
// is UTF-8 text that names an argument of the tool, or the mission (refused for its state, or
// as an id that names none), or speaks of the arguments; a refused call changes no mission: the counts of missions by state and the
// mission made for the call are as before.
//
//	go test -run '^$' -fuzz '^FuzzToolArguments$' -fuzztime 10m -parallel 1 ./tools/
func FuzzToolArguments(f *testing.F) {
	b := setup(f, setupOpts{})
	words := schemaWords(b.srv)
	for i, seed := range []string{
		`{"title":"add a health endpoint","brief":"GET /healthz returns 200","priority":5,"write_area":["internal/http/**"]}`,
		`{"missions":[{"key":"a","title":"one"},{"key":"b","title":"two","depends_on":["a"]}]}`,
		`{"agent_id":"fuzz-agent","capabilities":["go"],"wait_seconds":0}`,
		`{"mission_id":"$M","epoch":1}`,
		`{"mission_id":"$M","epoch":1,"summary":"done","artifacts":["a.go"]}`,
		`{"mission_id":"$M","epoch":1,"failure":{"kind":"test","summary":"2 tests fail"}}`,
		`{"mission_id":"$M","title":"renamed","priority":-3,"repository":"$R"}`,
		`{"mission_id":"$M","epoch":1,"percent":50,"message":"half"}`,
		`{"mission_id":"$M","epoch":1,"checkpoint":{"step":2}}`,
		`{"mission_id":"$M","epoch":1,"reason":"preempted"}`,
		`{"mission_id":"$M","reason":"not needed"}`,
		`{"mission_id":"$M"}`,
	} {
		f.Add(uint8(i), []byte(seed))
	}
	f.Fuzz(func(t *testing.T, tool uint8, args []byte) {
		if !json.Valid(args) {
			return // the JSON itself is FuzzStdio's and FuzzHTTPGate's business
		}
		name := fuzzTools[int(tool)%len(fuzzTools)]
		args, mission := placeholders(t, b, args)
		before := missionState(t, b, mission)
		var req mcp.CallToolRequest
		req.Params.Name, req.Params.Arguments = name, json.RawMessage(args)
		ctx, cancel := context.WithTimeout(b.ctx, time.Minute)
		defer cancel()
		res, err := b.client.CallTool(ctx, req)
		var msg string
		switch {
		case err != nil && (errors.Is(err, mcp.ErrInvalidRequest) || errors.Is(err, mcp.ErrInvalidParams)):
			msg = err.Error() // refused before the tool ran: text that is not UTF-8 (tools/utf8.go)
		case err != nil:
			t.Fatalf("%s %s: a JSON-RPC error other than a refusal of the request: %v", name, args, err)
		case !res.IsError:
			return
		default:
			msg = text(res)
		}
		if !utf8.ValidString(msg) || !saysWhatIsWrong(msg, append(words[name], missionNamed(args, mission)...)) {
			t.Fatalf("%s %s: the refusal %q names no argument of the tool", name, args, msg)
		}
		if after := missionState(t, b, mission); after != before {
			t.Fatalf("%s %s was refused (%s) but changed the missions:\nbefore %s\nafter  %s", name, args, msg, before, after)
		}
	})
}

// placeholders substitutes $M (a new mission's id) and $R, and turns a positive wait into 0.
func placeholders(t *testing.T, b *bundle, args []byte) ([]byte, string) {
	t.Helper()
	var mission string
	if bytes.Contains(args, []byte("$M")) {
		c, err := b.eng.CreateMission(b.ctx, engine.MissionSpec{Title: "fuzz target"}, "fuzz")
		if err != nil {
			t.Fatal(err)
		}
		mission = c.Mission.ID
		args = bytes.ReplaceAll(args, []byte("$M"), []byte(mission))
	}
	repo, _ := json.Marshal(b.repo)
	args = bytes.ReplaceAll(args, []byte(`"$R"`), repo)
	var m map[string]json.RawMessage
	if json.Unmarshal(args, &m) == nil {
		if f, err := strconv.ParseFloat(string(m["wait_seconds"]), 64); err == nil && f > 0 && f <= 600 {
			m["wait_seconds"] = json.RawMessage("0")
			args, _ = json.Marshal(m)
		}
	}
	return args, mission
}

// missionState is the counts of missions by state and, when given, one mission as JSON.
func missionState(t *testing.T, b *bundle, id string) string {
	t.Helper()
	st, err := b.eng.Status(b.ctx)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := json.Marshal(st.Counts)
	if id != "" {
		d, err := b.eng.GetMission(b.ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		m, _ := json.Marshal(d.Mission)
		out = append(out, m...)
	}
	return string(out)
}

// schemaWords are, per tool, the property names of its input schema at any depth.
func schemaWords(s *Server) map[string][]string {
	out := map[string][]string{}
	for _, tool := range s.Tools() {
		raw, _ := json.Marshal(tool.Tool) // inputSchema, raw or built
		var v struct {
			InputSchema any `json:"inputSchema"`
		}
		_ = json.Unmarshal(raw, &v)
		out[tool.Tool.Name] = propertyNames(v.InputSchema, nil)
	}
	return out
}

func propertyNames(v any, acc []string) []string {
	switch x := v.(type) {
	case map[string]any:
		if props, ok := x["properties"].(map[string]any); ok {
			for k := range props {
				acc = append(acc, k)
			}
		}
		for _, c := range x {
			acc = propertyNames(c, acc)
		}
	case []any:
		for _, c := range x {
			acc = propertyNames(c, acc)
		}
	}
	return acc
}

// missionNamed is how a refusal may name the mission the call is about: the one made for it,
// or "mission ID" for the mission_id the arguments give (a refusal of an id that names none).
func missionNamed(args []byte, made string) []string {
	var out []string
	if made != "" {
		out = append(out, made)
	}
	var a struct {
		MissionID *string `json:"mission_id"`
	}
	if json.Unmarshal(args, &a) == nil && a.MissionID != nil {
		out = append(out, "mission "+*a.MissionID+" ")
	}
	return out
}

// saysWhatIsWrong: the message names one of the tool's arguments or the mission the call is
// about (a refusal for its state), or speaks of the arguments.
func saysWhatIsWrong(msg string, words []string) bool {
	if strings.Contains(msg, "argument") {
		return true
	}
	for _, w := range words {
		if strings.Contains(msg, w) {
			return true
		}
	}
	return false
}

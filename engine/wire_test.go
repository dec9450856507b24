package engine_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// The engine's result types are its own (a protocol change must not change a stored row),
// but every field the protocol carries must reach them: a full wire result converts to a
// value whose stored JSON is the wire JSON, and each pair of types has the same fields.
func TestResultFromWire_KeepsEveryField(t *testing.T) {
	wire := agent.WorkerResult{Status: agent.StatusFailed, Summary: "s", Artifacts: []string{"a"},
		Evidence: []string{"e"}, Verdict: agent.VerdictSevere, Decision: "d",
		Failure:  &agent.Failure{Kind: agent.KindTest, Tool: "go test", Diagnostic: "x", Location: "a.go:1", Summary: "f"},
		Usage:    &agent.Usage{InputTokens: 1, OutputTokens: 2, CostUSD: 0.5},
		Findings: []agent.Finding{{Severity: "minor", Path: "p", Line: 3, Message: "m"}}}
	want, err := json.Marshal(wire)
	if err != nil {
		t.Fatal(err)
	}
	got, err := json.Marshal(engine.ResultFromWire(wire))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Fatalf("converted result differs from the wire result:\n got %s\nwant %s", got, want)
	}
	pairs := [][2]any{{agent.WorkerResult{}, domain.WorkerResult{}}, {agent.Failure{}, domain.Failure{}},
		{agent.Usage{}, domain.Usage{}}, {agent.Finding{}, domain.Finding{}}}
	for _, p := range pairs {
		w, e := reflect.TypeOf(p[0]), reflect.TypeOf(p[1])
		if w.NumField() != e.NumField() {
			t.Errorf("%s has %d fields, %s %d: convert the new field in engine/wire.go", w, w.NumField(), e, e.NumField())
		}
	}
}

func TestEnvironmentFailure_SameKindsAsTheProtocol(t *testing.T) {
	for _, k := range []string{agent.KindError, agent.KindTest, agent.KindBuild, agent.KindTimeout, agent.KindCrash,
		agent.KindProtocol, agent.KindModel, agent.KindAuth, agent.KindMissingToolchain, agent.KindQuota, agent.KindPermission} {
		if domain.EnvironmentFailure(k) != agent.EnvironmentKind(k) {
			t.Errorf("kind %q: engine says environment=%v, the protocol says %v", k, domain.EnvironmentFailure(k), agent.EnvironmentKind(k))
		}
	}
}

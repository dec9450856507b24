package adapters_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"testing"
	"unicode/utf8"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
	"github.com/mcp-scheduler/mcp-scheduler/agent/adapters"
)

// The decoders' fuzz targets read arbitrary bytes as an agent's stdout: split into lines by
// the production agent.LineReader, each line given to the runtime's production decoder, then
// End with one of several exit statuses. Properties: no panic; an error is a non-empty message and
// comes without messages; every message is of an agent → scheduler type, its text is valid
// UTF-8, it encodes as JSON, a progress percent is within 0..100, a log level is one of four,
// a rate limit has a known status; at most one worker.result per stream; End's result has a
// known status and, when failed or blocked, a failure kind. The seeds are lines of the real
// transcripts in testdata/ (claude-*.ndjson, codex-*.jsonl).
//
//	go test -run '^$' -fuzz '^FuzzClaudeDecoder$' -fuzztime 10m ./agent/adapters/

// FuzzNDJSONDecoder: our own protocol. Beyond the common properties, End's result passes
// WorkerResult.Check (agent.WorkerResult.Check says the ndjson adapter applies its rules), and
// a message decodes again, from its own JSON encoding, to itself.
func FuzzNDJSONDecoder(f *testing.F) {
	f.Add([]byte(`{"type":"task.progress","percent":140,"message":"half"}`+"\n"+`{"type":"worker.result","status":"completed","summary":"ok"}`), uint8(0))
	f.Fuzz(func(t *testing.T, data []byte, exit uint8) {
		msgs := decodeStream(t, agent.RuntimeNDJSON, data, exit, true)
		for _, m := range msgs {
			checkReencodes(t, m)
		}
	})
}

// FuzzClaudeDecoder: Claude Code's stream-json.
func FuzzClaudeDecoder(f *testing.F) {
	f.Add([]byte(`{"type":"result","subtype":"success","is_error":false,"result":"done","total_cost_usd":0.01}`), uint8(0))
	f.Fuzz(func(t *testing.T, data []byte, exit uint8) {
		decodeStream(t, agent.RuntimeClaudeCode, data, exit, false)
	})
}

// FuzzCodexDecoder: Codex's exec --json events.
func FuzzCodexDecoder(f *testing.F) {
	f.Add([]byte(`{"type":"turn.completed","usage":{"input_tokens":10,"output_tokens":2}}`), uint8(0))
	f.Fuzz(func(t *testing.T, data []byte, exit uint8) { decodeStream(t, agent.RuntimeCodex, data, exit, false) })
}

var exits = []agent.ExitStatus{
	{Known: true},
	{Known: true, Code: 1},
	{Known: true, Code: -1, Signal: "SIGKILL", Reason: "hard_timeout"},
	{Known: true, Code: -1, Signal: "SIGTERM", Reason: "cancelled"},
	{},
}

// decodeStream decodes data as one attempt's stdout that ended with exits[exit%len(exits)],
// checks every property and returns the messages. strict: End's result must pass Check.
func decodeStream(t *testing.T, runtime agent.Runtime, data []byte, exit uint8, strict bool) []agent.Message {
	t.Helper()
	a, err := adapters.For(runtime)
	if err != nil {
		t.Fatal(err)
	}
	dec := a.NewDecoder()
	msgs := decodeLines(t, dec, data)
	res := dec.End(exits[int(exit)%len(exits)])
	checkResult(t, res, strict)
	checkText(t, "End's result", res)
	if r := resultOf(msgs); r != nil {
		said, _ := json.Marshal(*r)
		ended, _ := json.Marshal(res)
		if !bytes.Equal(said, ended) { // as JSON: a copy may hold nil for an empty list
			t.Fatalf("End returned %s, not the worker.result the stream carried (%s)", ended, said)
		}
	}
	return msgs
}

func decodeLines(t *testing.T, dec agent.Decoder, data []byte) []agent.Message {
	t.Helper()
	lr := agent.NewLineReader(bytes.NewReader(data), 0)
	var all []agent.Message
	results := 0
	for {
		line, err := lr.Next()
		if errors.Is(err, io.EOF) {
			return all
		}
		if err != nil {
			t.Fatalf("line reader over a byte slice: %v", err)
		}
		msgs, err := dec.Line(line)
		if err != nil {
			if err.Error() == "" || len(msgs) > 0 {
				t.Fatalf("line %q: error %q with %d messages", line, err, len(msgs))
			}
			continue
		}
		for _, m := range msgs {
			checkMessage(t, m)
			if m.Type == agent.TypeResult {
				results++
			}
		}
		if results > 1 {
			t.Fatalf("a second worker.result came out of line %q", line)
		}
		all = append(all, msgs...)
	}
}

var toScheduler = map[string]bool{
	agent.TypeHeartbeat: true, agent.TypeProgress: true, agent.TypeLog: true, agent.TypeCheckpoint: true,
	agent.TypeYield: true, agent.TypeRateLimit: true, agent.TypeUsage: true, agent.TypeResult: true,
}

func checkMessage(t *testing.T, m agent.Message) {
	t.Helper()
	if !toScheduler[m.Type] {
		t.Fatalf("message of type %q, which no agent sends", m.Type)
	}
	if _, err := json.Marshal(m); err != nil {
		t.Fatalf("message %+v does not encode: %v", m, err)
	}
	checkText(t, "message "+m.Type, m)
	switch m.Type {
	case agent.TypeProgress:
		if m.Percent != nil && !(*m.Percent >= 0 && *m.Percent <= 100) {
			t.Fatalf("progress percent %v out of 0..100", *m.Percent)
		}
	case agent.TypeLog:
		switch m.Level {
		case "debug", "info", "warn", "error":
		default:
			t.Fatalf("log level %q", m.Level)
		}
	case agent.TypeRateLimit:
		if m.RateLimit == nil || !agent.KnownRateStatus(m.RateLimit.Status) || !(m.RateLimit.RetryAfterSeconds >= 0) {
			t.Fatalf("rate limit %+v", m.RateLimit)
		}
	case agent.TypeResult:
		if m.WorkerResult == nil {
			t.Fatal("worker.result without a result")
		}
	}
	if m.Type != agent.TypeResult && m.WorkerResult != nil && m.Type != agent.TypeUsage {
		t.Fatalf("a %s message carries a worker result %+v", m.Type, *m.WorkerResult)
	}
}

// checkResult: a known status, a failure kind when failed or blocked; strict: all of Check.
func checkResult(t *testing.T, r agent.WorkerResult, strict bool) {
	t.Helper()
	if !strict {
		r.Usage = nil // the CLIs' own usage figures are passed on as they are (the runner checks them)
	}
	if err := r.Check(); err != nil {
		t.Fatalf("End's result %+v breaks the worker.result schema: %v", r, err)
	}
}

func resultOf(msgs []agent.Message) *agent.WorkerResult {
	for _, m := range msgs {
		if m.Type == agent.TypeResult {
			return m.WorkerResult
		}
	}
	return nil
}

// checkReencodes: the message's JSON, decoded by a fresh ndjson decoder, is the same message.
func checkReencodes(t *testing.T, m agent.Message) {
	t.Helper()
	raw, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	again, err := adapters.NDJSON{}.NewDecoder().Line(raw)
	if err != nil || len(again) != 1 {
		t.Fatalf("%s does not decode again: %v (%d messages)", raw, err, len(again))
	}
	raw2, err := json.Marshal(again[0])
	if err != nil || !bytes.Equal(raw, raw2) {
		t.Fatalf("%s decodes again as %s (%v)", raw, raw2, err)
	}
}

// checkText fails when any string reachable from v is not valid UTF-8.
func checkText(t *testing.T, what string, v any) {
	t.Helper()
	if s, ok := invalidString(reflect.ValueOf(v)); ok {
		t.Fatalf("%s holds text that is not UTF-8: %q", what, s)
	}
}

func invalidString(v reflect.Value) (string, bool) {
	switch v.Kind() {
	case reflect.String:
		return v.String(), !utf8.ValidString(v.String())
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			return invalidString(v.Elem())
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if s, bad := invalidString(v.Field(i)); bad {
				return s, true
			}
		}
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return "", false // raw JSON (a checkpoint): checked as a line already
		}
		for i := range v.Len() {
			if s, bad := invalidString(v.Index(i)); bad {
				return s, true
			}
		}
	case reflect.Map:
		for _, k := range v.MapKeys() {
			if s, bad := invalidString(k); bad {
				return s, true
			}
			if s, bad := invalidString(v.MapIndex(k)); bad {
				return s, true
			}
		}
	}
	return "", false
}

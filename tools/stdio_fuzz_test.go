package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
)

// FuzzStdio feeds arbitrary bytes as the stdin of the production stdio server (ServeStdio:
// the stdin filter, the JSON-RPC check, preflight, mcp-go and the tools, over a real SQLite
// store and git repository). Properties: ServeStdio returns once its input ended; stdout
// carries only JSON-RPC 2.0 messages, one per line; a response has an id the input sent (null
// only for -32700 and -32600), exactly one of result and error, an error has a code and a
// message; no -32603 (an internal error) whatever the input, except "context canceled" for a
// request still running when the input ended (the end of stdin is the client's shutdown: the
// server cancels what runs and exits, as the MCP stdio transport has it); every line the
// filter refuses is answered.
//
//	go test -run '^$' -fuzz '^FuzzStdio$' -fuzztime 10m -parallel 1 ./tools/
func FuzzStdio(f *testing.F) {
	b := setup(f, setupOpts{})
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + mcp.LATEST_PROTOCOL_VERSION +
		`","capabilities":{},"clientInfo":{"name":"fuzz","version":"0"}}}` + "\n" + `{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"
	f.Add([]byte(init + `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`))
	f.Add([]byte(init + `{"jsonrpc":"2.0","id":"c","method":"tools/call","params":{"name":"create_mission","arguments":{"title":"fuzz"}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		out := serveStdioOnce(t, b, data)
		refused := refusedLines(data)
		ids := inputIDs(data)
		errs := 0
		for _, line := range bytes.Split(bytes.TrimSuffix(out, []byte("\n")), []byte("\n")) {
			if len(out) == 0 {
				break
			}
			if checkRPCLine(t, line, ids) {
				errs++
			}
		}
		if errs < refused {
			t.Fatalf("%d lines were refused but only %d errors came back:\n%s", refused, errs, out)
		}
	})
}

// serveStdioOnce runs ServeStdio over data and returns what it wrote, failing when it does
// not return within a minute of its input's end.
func serveStdioOnce(t *testing.T, b *bundle, data []byte) []byte {
	ctx, cancel := context.WithCancel(b.ctx)
	defer cancel()
	out := &syncBuffer{}
	done := make(chan error, 1)
	go func() { done <- b.srv.ServeStdio(ctx, bytes.NewReader(data), out) }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		cancel()
		<-done
		t.Fatalf("ServeStdio went on for a minute after its input ended; it wrote:\n%s", out.bytes())
	}
	return out.bytes()
}

// refusedLines counts the input lines the stdin filter must answer with an error: those
// checkMessage refuses and those over the cap.
func refusedLines(data []byte) int {
	lr := agent.NewLineReader(bytes.NewReader(data), MaxStdinMessage)
	n := 0
	for {
		line, err := lr.Next()
		if err != nil {
			return n
		}
		if checkMessage(line) != nil {
			n++
		}
	}
}

// inputIDs returns the ids the input's lines carry, as canonical JSON.
func inputIDs(data []byte) map[string]bool {
	ids := map[string]bool{}
	for _, line := range bytes.Split(data, []byte("\n")) {
		var env struct {
			ID json.RawMessage `json:"id"`
		}
		if json.Unmarshal(bytes.TrimPrefix(line, bom), &env) == nil && env.ID != nil {
			ids[canonicalID(env.ID)] = true
		}
	}
	return ids
}

var bom = []byte{0xEF, 0xBB, 0xBF}

// canonicalID is an id's value as text: a string's contents, a number in the shortest form.
func canonicalID(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return "s:" + s
	}
	if f, err := strconv.ParseFloat(string(raw), 64); err == nil {
		return "n:" + strconv.FormatFloat(f, 'g', -1, 64)
	}
	return "?" + string(raw)
}

// checkRPCLine fails unless line is one JSON-RPC 2.0 message as the server may send it, and
// reports whether it is an error response.
func checkRPCLine(t *testing.T, line []byte, ids map[string]bool) bool {
	t.Helper()
	var m struct {
		JSONRPC string           `json:"jsonrpc"`
		ID      json.RawMessage  `json:"id"`
		Method  *string          `json:"method"`
		Result  json.RawMessage  `json:"result"`
		Error   *json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(line, &m); err != nil || m.JSONRPC != "2.0" {
		t.Fatalf("stdout line is not a JSON-RPC 2.0 message (%v): %s", err, line)
	}
	if m.Method != nil {
		if *m.Method == "" {
			t.Fatalf("a message with an empty method: %s", line)
		}
		return false
	}
	if (m.Result != nil) == (m.Error != nil) || m.ID == nil {
		t.Fatalf("a response needs an id and exactly one of result and error: %s", line)
	}
	if m.Error == nil {
		if !ids[canonicalID(m.ID)] {
			t.Fatalf("a response to id %s, which the input never sent: %s", m.ID, line)
		}
		return false
	}
	code := checkRPCError(t, *m.Error, line)
	switch {
	case string(m.ID) == "null":
		if code != mcp.PARSE_ERROR && code != mcp.INVALID_REQUEST {
			t.Fatalf("error %d with id null (only -32700 and -32600 may have no id): %s", code, line)
		}
	case !ids[canonicalID(m.ID)]:
		t.Fatalf("an error for id %s, which the input never sent: %s", m.ID, line)
	}
	return true
}

// checkRPCError checks a JSON-RPC error object and returns its code.
func checkRPCError(t *testing.T, raw json.RawMessage, line []byte) int {
	t.Helper()
	var e struct {
		Code    *int    `json:"code"`
		Message *string `json:"message"`
	}
	if err := json.Unmarshal(raw, &e); err != nil || e.Code == nil || e.Message == nil || *e.Message == "" {
		t.Fatalf("an error without a code and a message: %s", line)
	}
	if *e.Code == mcp.INTERNAL_ERROR && !strings.HasSuffix(*e.Message, context.Canceled.Error()) {
		t.Fatalf("an internal error (-32603) for the client's input: %s", line)
	}
	return *e.Code
}

// syncBuffer is a bytes.Buffer safe for concurrent writes.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.Write(p)
}

func (s *syncBuffer) bytes() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return bytes.Clone(s.buf.Bytes())
}

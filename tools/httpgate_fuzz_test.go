package tools

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// FuzzHTTPGate sends arbitrary requests to the production HTTP listener (ServeHTTP on
// 127.0.0.1: the Host and Origin guard, the session gate, the JSON-RPC check, preflight,
// mcp-go, the tools over a real SQLite store): the method, the path, the MCP-Protocol-Version,
// Content-Type, Accept and Origin headers, the session (none, a live one made for the request,
// or the fuzzed id) and the body are fuzzed. Properties: never a 5xx; the status is one the
// gate and mcp-go document for a client's mistake or a success (200, 202, 400, 403, 404, 405,
// 406, 413, 415); a JSON body, and every event of an event stream, is a JSON-RPC 2.0 message
// (an error with a code and a message, never -32603).
//
//	go test -run '^$' -fuzz '^FuzzHTTPGate$' -fuzztime 10m -parallel 1 ./tools/
func FuzzHTTPGate(f *testing.F) {
	b := setup(f, setupOpts{})
	base, _ := httpServer(f, b, HTTPOptions{})
	client := &http.Client{}
	call := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"create_mission","arguments":{"title":"fuzz"}}}`
	both := "application/json, text/event-stream"
	f.Add(uint8(0), uint8(0), "", "application/json", both, "", uint8(0), "", []byte(initBody))
	f.Add(uint8(0), uint8(0), "2025-06-18", "application/json", both, "", uint8(1), "", []byte(call))
	f.Add(uint8(0), uint8(0), "2025-06-18", "application/json", both, "http://localhost:3000", uint8(2), "mcp-session-f00", []byte(`{"jsonrpc":"2.0","id":"x","method":"tools/list"}`))
	f.Add(uint8(1), uint8(0), "2025-06-18", "", "text/event-stream", "", uint8(1), "", []byte(nil))
	f.Add(uint8(2), uint8(0), "2025-06-18", "", "", "", uint8(1), "", []byte(nil))
	f.Add(uint8(0), uint8(0), mcp.ProtocolVersion20260728, "application/json", both, "", uint8(0), "",
		[]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"`+mcp.ProtocolVersion20260728+`"}}}`))
	f.Add(uint8(0), uint8(1), "", "application/json", both, "", uint8(2), "abc", []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	f.Fuzz(func(t *testing.T, method, path uint8, version, contentType, accept, origin string, session uint8, sid string, body []byte) {
		req, err := http.NewRequestWithContext(context.Background(), fuzzMethods[int(method)%len(fuzzMethods)],
			base+fuzzPaths[int(path)%len(fuzzPaths)], bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range map[string]string{mcp.HeaderProtocolVersion: version, "Content-Type": contentType, "Accept": accept, "Origin": origin} {
			if v != "" {
				req.Header.Set(k, v)
			}
		}
		switch session % 3 {
		case 1:
			req.Header.Set(server.HeaderKeySessionID, liveSession(t, client, base))
		case 2:
			req.Header.Set(server.HeaderKeySessionID, sid)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		res, err := client.Do(req.WithContext(ctx))
		if err != nil {
			if strings.Contains(err.Error(), "invalid header field") || strings.Contains(err.Error(), "invalid method") {
				return // the client would not send it
			}
			t.Fatalf("%s %s: %v", req.Method, req.URL.Path, err)
		}
		defer res.Body.Close()
		checkHTTPAnswer(t, req, res)
	})
}

var (
	fuzzMethods = []string{http.MethodPost, http.MethodGet, http.MethodDelete, http.MethodPut, http.MethodOptions, http.MethodHead}
	fuzzPaths   = []string{PathMCP, PathMessage + "?sessionId=nope", PathMCP + "/", "/"}
)

// statuses a client's request may get from the gate and mcp-go.
var clientStatuses = map[int]bool{200: true, 202: true, 400: true, 403: true, 404: true, 405: true, 406: true, 413: true, 415: true}

func checkHTTPAnswer(t *testing.T, req *http.Request, res *http.Response) {
	t.Helper()
	what := req.Method + " " + req.URL.String()
	if !clientStatuses[res.StatusCode] {
		b, _ := io.ReadAll(io.LimitReader(res.Body, 4096))
		t.Fatalf("%s: status %d (%s)", what, res.StatusCode, b)
	}
	if req.Method == http.MethodHead {
		return // a HEAD answer has no body, whatever its Content-Type
	}
	ctype, _, _ := mime.ParseMediaType(res.Header.Get("Content-Type"))
	switch ctype {
	case "application/json":
		body, err := io.ReadAll(res.Body)
		if err != nil {
			t.Fatalf("%s: reading the body: %v", what, err)
		}
		checkHTTPMessage(t, what, bytes.TrimSpace(body))
	case "text/event-stream":
		if req.Method != http.MethodGet { // a GET stream stays open, with nothing to say
			checkEventStream(t, what, res)
		}
	}
}

// checkEventStream reads a POST's SSE answer for five seconds at most (a tool call may wait
// longer) and checks every data line.
func checkEventStream(t *testing.T, what string, res *http.Response) {
	t.Helper()
	timer := time.AfterFunc(5*time.Second, func() { _ = res.Body.Close() })
	defer timer.Stop()
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 64<<10), MaxStdinMessage)
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data:"); ok && strings.TrimSpace(data) != "" {
			checkHTTPMessage(t, what, []byte(strings.TrimSpace(data)))
		}
	}
	if err := sc.Err(); err != nil && !errors.Is(err, http.ErrBodyReadAfterClose) && !strings.Contains(err.Error(), "closed") {
		t.Fatalf("%s: reading the event stream: %v", what, err)
	}
}

// checkHTTPMessage fails unless body is one JSON-RPC 2.0 message the server may send.
func checkHTTPMessage(t *testing.T, what string, body []byte) {
	t.Helper()
	var m struct {
		JSONRPC string           `json:"jsonrpc"`
		ID      json.RawMessage  `json:"id"`
		Method  *string          `json:"method"`
		Result  json.RawMessage  `json:"result"`
		Error   *json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(body, &m); err != nil || m.JSONRPC != "2.0" {
		t.Fatalf("%s: a JSON body that is not a JSON-RPC 2.0 message (%v): %s", what, err, body)
	}
	if m.Method != nil {
		return // a notification or a request of the server's
	}
	if (m.Result != nil) == (m.Error != nil) {
		t.Fatalf("%s: a response needs exactly one of result and error: %s", what, body)
	}
	if m.Error != nil {
		checkRPCError(t, *m.Error, body)
	}
}

// liveSession initializes a session over HTTP and returns its id.
func liveSession(t *testing.T, client *http.Client, base string) string {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, base+PathMCP, strings.NewReader(initBody))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	res, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	_, _ = io.Copy(io.Discard, res.Body)
	sid := res.Header.Get(server.HeaderKeySessionID)
	if res.StatusCode != http.StatusOK || sid == "" {
		t.Fatalf("initialize: status %d, session %q", res.StatusCode, sid)
	}
	return sid
}

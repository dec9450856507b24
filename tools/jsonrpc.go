package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/mark3labs/mcp-go/mcp"
)

// Every message a transport reads passes checkMessage before mcp-go sees it, so that the
// JSON-RPC 2.0 rules hold the same way on stdio, Streamable HTTP and legacy SSE
// (docs/mcp.md, "JSON-RPC"):
//
//   - a message that cannot be parsed gets -32700 with id null;
//   - a message that is JSON but not a valid request, notification or response gets -32600:
//     a batch array (JSON-RPC batches existed only in MCP 2025-03-26; this server refuses them
//     on every revision), a non-object, a jsonrpc member other than "2.0", an id that is null,
//     an object, an array, a boolean, a fraction or an integer beyond ±(2^53-1) (mcp-go
//     decodes ids as float64, so a larger one would be echoed changed), a method that is not a
//     non-empty string, or an id with neither method, result nor error;
//   - the error carries the message's id when that id is valid, else null.
//
// A valid message goes on unchanged: mcp-go answers requests with the id as it came (a string
// stays a string, a number a number) and never answers a notification.

// maxSafeID is the largest integer id echoed exactly (2^53-1, the largest integer a float64
// and a JavaScript number hold without rounding).
const maxSafeID = 1<<53 - 1

// rpcProblem is why a message is refused before mcp-go sees it: the JSON-RPC error code, the
// id to answer with (JSON null when none could be read), a message saying what to send and,
// for some codes, data (resource not found: {"uri": …}).
type rpcProblem struct {
	Code    int
	ID      json.RawMessage
	Message string
	Data    any
}

func (p *rpcProblem) Error() string { return fmt.Sprintf("JSON-RPC %d: %s", p.Code, p.Message) }

// envelope is the part of a message the check reads; absent members stay nil.
type envelope struct {
	JSONRPC json.RawMessage `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  json.RawMessage `json:"method"`
	Result  json.RawMessage `json:"result"`
	Error   json.RawMessage `json:"error"`
	Params  struct {
		Meta *mcp.Meta `json:"_meta"`
	} `json:"params"`
}

// bare is an envelope without params, for a message whose params are of another shape.
type bare struct {
	JSONRPC json.RawMessage `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  json.RawMessage `json:"method"`
	Result  json.RawMessage `json:"result"`
	Error   json.RawMessage `json:"error"`
}

var jsonNull = json.RawMessage("null")

// messageHead is what a transport needs of a checked message.
type messageHead struct {
	method      string
	id          json.RawMessage // nil for a notification
	metaVersion string          // params._meta protocol version (2026-07-28 requests)
	raw         []byte          // the message itself (set by readMessage)
}

// checkMessage returns nil for a well-formed JSON-RPC 2.0 request, notification or response,
// and the problem otherwise.
func checkMessage(raw []byte) *rpcProblem {
	_, p := inspectMessage(raw)
	return p
}

// inspectMessage checks raw (one decoding pass for a valid message) and returns its head.
func inspectMessage(raw []byte) (messageHead, *rpcProblem) {
	trimmed := bytes.TrimLeft(raw, " \t\r\n")
	if len(trimmed) == 0 || trimmed[0] != '{' {
		var v json.RawMessage
		if err := json.Unmarshal(raw, &v); err != nil {
			return messageHead{}, parseProblem(err)
		}
		if trimmed[0] == '[' {
			return messageHead{}, invalid(nil, "batch arrays are not supported (JSON-RPC batching was removed from MCP after 2025-03-26); send one message per request")
		}
		return messageHead{}, invalid(nil, "a JSON-RPC message must be an object with jsonrpc, method and id")
	}
	env, err := decodeEnvelope(raw)
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se):
		return messageHead{}, parseProblem(err)
	case err != nil:
		return messageHead{}, invalid(nil, "the message could not be read: "+err.Error())
	}
	id, idErr := checkID(env.ID)
	if idErr != "" {
		return messageHead{}, invalid(nil, idErr)
	}
	if string(env.JSONRPC) != `"2.0"` {
		return messageHead{}, invalid(id, `jsonrpc must be "2.0"`)
	}
	head := messageHead{id: id, metaVersion: env.Params.Meta.ProtocolVersion()}
	if env.Method != nil {
		if json.Unmarshal(env.Method, &head.method) != nil || head.method == "" {
			return messageHead{}, invalid(id, "method must be a non-empty string")
		}
		return head, nil
	}
	if env.ID == nil {
		return messageHead{}, invalid(nil, "a message without method must be a response (an id with result or error); a notification needs a method")
	}
	if env.Result == nil && env.Error == nil {
		return messageHead{}, invalid(id, "a message without method must be a response carrying result or error")
	}
	return head, nil
}

// decodeEnvelope decodes the envelope; params that are not an object with an object _meta
// are left for mcp-go to refuse (invalid params), so the rest is read again without them.
func decodeEnvelope(raw []byte) (envelope, error) {
	var env envelope
	err := json.Unmarshal(raw, &env)
	var se *json.SyntaxError
	if err == nil || errors.As(err, &se) {
		return env, err
	}
	var b bare
	if err := json.Unmarshal(raw, &b); err != nil {
		return env, err
	}
	return envelope{JSONRPC: b.JSONRPC, ID: b.ID, Method: b.Method, Result: b.Result, Error: b.Error}, nil
}

func parseProblem(err error) *rpcProblem {
	return &rpcProblem{Code: mcp.PARSE_ERROR, ID: jsonNull, Message: "parse error: " + parseDetail(err) + "; send one JSON-RPC 2.0 message as UTF-8 JSON"}
}

// checkID returns the id to echo (nil when the message has none) or why it is refused.
func checkID(raw json.RawMessage) (json.RawMessage, string) {
	if raw == nil {
		return nil, ""
	}
	const want = "; use a string or an integer (a message without id is a notification)"
	switch raw[0] {
	case '"':
		return raw, ""
	case 'n':
		return nil, "id must not be null" + want
	case '{', '[':
		return nil, "id must not be an object or an array" + want
	case 't', 'f':
		return nil, "id must not be a boolean" + want
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || f != math.Trunc(f) {
		return nil, "id " + string(raw) + " is not an integer" + want
	}
	if math.Abs(f) > maxSafeID {
		return nil, "id " + string(raw) + " is beyond ±(2^53-1) and would not be echoed exactly; use a smaller integer or a string"
	}
	return raw, ""
}

func invalid(id json.RawMessage, msg string) *rpcProblem {
	if id == nil {
		id = jsonNull
	}
	return &rpcProblem{Code: mcp.INVALID_REQUEST, ID: id, Message: "invalid request: " + msg}
}

// parseDetail names where the JSON broke, without echoing the message.
func parseDetail(err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("%s (at byte %d)", se.Error(), se.Offset)
	}
	return err.Error()
}

// rpcErrorResponse is a JSON-RPC error response as written on the wire.
type rpcErrorResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   rpcErrorBody    `json:"error"`
}

// rpcErrorBody is the error member of a JSON-RPC error response.
type rpcErrorBody struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

// rpcErrorLine is the JSON-RPC error response for p, without a trailing newline.
func rpcErrorLine(p *rpcProblem) []byte {
	id := p.ID
	if id == nil {
		id = jsonNull
	}
	b, err := json.Marshal(rpcErrorResponse{JSONRPC: "2.0", ID: id, Error: rpcErrorBody{p.Code, p.Message, p.Data}})
	if err != nil { // cannot happen: the id is valid JSON, the rest strings and ints
		return []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"internal error"}}`)
	}
	return b
}

package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// Every handler answers on one of two channels (docs/error-handling.md):
//
//   - a caller's mistake (bad argument, unknown id, illegal transition, cycle, stale epoch)
//     is a successful JSON-RPC response whose result has isError=true and a message that
//     names the field and says what to send instead, so the model can correct itself;
//   - a server fault (database unavailable, git broken, a bug) is a JSON-RPC error: the
//     handler returns a Go error and mcp-go answers with an error response.
//
// A successful result carries the structured value (structuredContent, checked against the
// tool's output schema) and the same value as JSON text, because many clients show the
// model only the text.

// callerError is a mistake of the caller found by the tools layer itself (the engine's own
// are recognised with engine.CallerError).
type callerError struct{ msg string }

func (e *callerError) Error() string { return e.msg }

// fieldError returns a caller error about one argument, in the engine's FieldError form
// ("field: problem (hint)").
func fieldError(field, problem, hint string) error {
	return &domain.FieldError{Field: field, Problem: problem, Hint: hint}
}

// isCallerError reports whether err must be answered with an isError result.
func isCallerError(err error) bool {
	var ce *callerError
	return errors.As(err, &ce) || domain.CallerError(err)
}

// typedHandler is a tool's logic: typed arguments in, a typed result (or an error) out.
type typedHandler[A, R any] func(ctx context.Context, req mcp.CallToolRequest, args A) (R, error)

// handle adapts a typed handler to mcp-go: it binds the arguments (a binding failure is a
// caller error), runs fn, and answers on the channel the error calls for.
func handle[A, R any](fn typedHandler[A, R]) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		ctx, stop := boundToStream(ctx) // a legacy SSE call ends with its stream (ssestreams.go)
		defer stop()
		var args A
		if err := bindArguments(req, &args); err != nil {
			return mcp.NewToolResultError(err.Error()), nil
		}
		res, err := fn(ctx, req, args)
		if err != nil {
			return errorResult(req.Params.Name, err)
		}
		return structuredResult(res)
	}
}

// bindArguments decodes the call's arguments into args. Input schema validation already
// rejected most bad shapes; what is left (a number too large for int, say) is reported
// here in the same words.
func bindArguments(req mcp.CallToolRequest, args any) error {
	raw := req.GetRawArguments()
	if raw == nil {
		return nil
	}
	b, err := json.Marshal(raw)
	if err != nil {
		return fmt.Errorf("arguments: %v (send a JSON object matching the tool's input schema)", err)
	}
	if string(b) == "null" {
		return nil
	}
	if err := json.Unmarshal(b, args); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return fmt.Errorf("%s: expected %s, got JSON %s (see the tool's input schema)", te.Field, te.Type, te.Value)
		}
		return fmt.Errorf("arguments: %v (send a JSON object matching the tool's input schema)", err)
	}
	return nil
}

// errorResult answers err on the right channel. A database that cannot be reached now
// (domain.ErrStoreUnavailable: not up yet at start, or gone mid-run) is answered as an
// isError result too, though it is no mistake of the caller: its message says what is down
// and that the call may be made again later, which a model can act on. So is a claim made of
// a process that does not run its node now (domain.ErrNotLeader: another process on the
// data dir holds the node's lease, or it is starting): the message says to claim from
// another node or retry.
func errorResult(tool string, err error) (*mcp.CallToolResult, error) {
	if errors.Is(err, domain.ErrStoreUnavailable) || errors.Is(err, domain.ErrNotLeader) {
		return mcp.NewToolResultError(unavailableMessage + err.Error()), nil
	}
	if isCallerError(err) {
		return mcp.NewToolResultError(callerMessage(err)), nil
	}
	return nil, fmt.Errorf("%s: %w", tool, err)
}

// unavailableMessage starts the text of a call answered while the database is unavailable.
const unavailableMessage = "unavailable, try again later: "

// callerMessage is the text a model reads for a caller error: the engine's message (which
// names the field and the fix), with a short prefix saying what kind of mistake it was.
func callerMessage(err error) string {
	msg := err.Error()
	switch {
	case errors.Is(err, domain.ErrLeaseLost):
		return msg // already says "lease lost" and what to do
	case errors.Is(err, domain.ErrInvalid):
		return "invalid argument: " + msg
	case errors.Is(err, domain.ErrNotFound), errors.Is(err, domain.ErrUnknownMission):
		return "not found: " + msg
	case errors.Is(err, domain.ErrIllegalTransition):
		return "not allowed now: " + msg
	case errors.Is(err, domain.ErrCycle), errors.Is(err, domain.ErrDuplicateID):
		return "rejected: " + msg
	}
	return msg
}

// structuredResult is a successful result: structuredContent and its JSON text copy.
func structuredResult(v any) (*mcp.CallToolResult, error) {
	if raw, ok := v.(json.RawMessage); ok { // already encoded (the status cache)
		return mcp.NewToolResultStructured(raw, string(raw)), nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode result: %w", err)
	}
	return mcp.NewToolResultStructured(json.RawMessage(b), string(b)), nil
}

// actor names who made a change, for the event log: "mcp:<client name>" when the client
// introduced itself, else "mcp".
func actor(ctx context.Context) string {
	if a, ok := ctx.Value(actorKey{}).(string); ok { // a call run as a task (taskrpc.go)
		return a
	}
	if s, ok := server.ClientSessionFromContext(ctx).(server.SessionWithClientInfo); ok {
		if name := s.GetClientInfo().Name; name != "" {
			return "mcp:" + clip(name, 64)
		}
	}
	return "mcp"
}

// actorKey carries the actor of a call that runs without its request's session (a task).
type actorKey struct{}

// clip shortens s to at most n bytes without splitting a UTF-8 sequence.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// hasControl reports whether s contains a control character (NUL, newline, escape, ...).
func hasControl(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f })
}

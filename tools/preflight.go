package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// Why preflight exists. mcp-go v1.2.1 answers every error that a resource-template or a
// prompt handler returns with -32603 Internal error (server/handler_errors.go: handlerError;
// only a URL elicitation is special), so a handler cannot say "resource not found" or
// "invalid params" itself. Each transport therefore asks preflight, next to the task
// interception, about a resources/read or prompts/get before mcp-go sees it, and answers the
// caller's mistake itself (docs/error-handling.md, "Resources and prompts"):
//
//   - resources/read of a mission:// or voyage:// URI whose id is malformed or names nothing:
//     -32002 (-32602 on protocol 2026-07-28, the code mcp-go's resourceNotFoundCode picks for
//     a URI no template matches), with data.uri;
//   - prompts/get with an argument missing or invalid: -32602 naming the argument as the
//     client sent it.
//
// The rules are the handlers' own (checkResource, checkPrompt): a handler runs the same
// checks, so the early answer and the handler never disagree on what is wrong. What passes
// preflight and then fails in the handler (a mission pruned in between) still fails, with
// mcp-go's -32603 and the same text. The in-process transport (a Go program embedding
// Server.MCP()) has no preflight and sees -32603 for both.

// resourceNotFoundError is a resources/read of a URI that names nothing this server has.
type resourceNotFoundError struct {
	uri string
	why string // what is wrong and where ids come from
}

func (e *resourceNotFoundError) Error() string {
	return fmt.Sprintf("resource not found: %s: %s", e.uri, e.why)
}

// Unwrap makes the error match server.ErrResourceNotFound.
func (e *resourceNotFoundError) Unwrap() error { return server.ErrResourceNotFound }

// promptArgError is a prompts/get argument that is missing or invalid.
type promptArgError struct {
	arg     string // the argument's name as the client sends it ("goal")
	problem string // "is required", "\"x\" is not a positive number"
	fix     string // what to send instead
}

func (e *promptArgError) Error() string {
	return fmt.Sprintf("invalid params: prompt argument %q %s; %s", e.arg, e.problem, e.fix)
}

// preflight returns the JSON-RPC error for a resources/read or prompts/get whose params are
// the caller's mistake, and nil for every other message (mcp-go answers those). modern says
// whether the request is of protocol 2026-07-28 or later. It reads the store (one lookup
// per id named); other store errors are left to the handler.
func (s *Server) preflight(ctx context.Context, head messageHead, raw []byte, modern bool) *rpcProblem {
	if head.id == nil || (modern && !modernEnvelopeOK(raw)) {
		return nil
	}
	var err error
	switch mcp.MCPMethod(head.method) {
	case mcp.MethodResourcesRead:
		var m struct {
			Params struct {
				URI string `json:"uri"`
			} `json:"params"`
		}
		if json.Unmarshal(raw, &m) != nil {
			return nil // mcp-go refuses params of the wrong shape itself
		}
		err = s.checkResource(ctx, m.Params.URI)
	case mcp.MethodPromptsGet:
		var m struct {
			Params struct {
				Name      string            `json:"name"`
				Arguments map[string]string `json:"arguments"`
			} `json:"params"`
		}
		if json.Unmarshal(raw, &m) != nil {
			return nil
		}
		err = s.checkPrompt(ctx, m.Params.Name, m.Params.Arguments)
	default:
		return nil
	}
	p := rpcProblemFor(err, modern)
	if p != nil {
		p.ID = head.id
		s.log.Info("refused an MCP request: the caller's params", "method", head.method, "code", p.Code, "why", p.Message)
	}
	return p
}

// rpcProblemFor is the JSON-RPC error for a caller's mistake found by checkResource or
// checkPrompt, nil for anything else.
func rpcProblemFor(err error, modern bool) *rpcProblem {
	var nf *resourceNotFoundError
	var pa *promptArgError
	switch {
	case errors.As(err, &nf):
		code := mcp.RESOURCE_NOT_FOUND
		if modern {
			code = mcp.INVALID_PARAMS
		}
		return &rpcProblem{Code: code, Message: nf.Error(), Data: map[string]string{"uri": nf.uri}}
	case errors.As(err, &pa):
		return &rpcProblem{Code: mcp.INVALID_PARAMS, Message: pa.Error()}
	}
	return nil
}

// modernEnvelopeOK reports whether a 2026-07-28 request carries in _meta what mcp-go requires
// before it dispatches (a protocol version it implements and the client's capabilities), so
// that preflight never answers in place of mcp-go's own refusal of the envelope.
func modernEnvelopeOK(raw []byte) bool {
	var m struct {
		Params struct {
			Meta *mcp.Meta `json:"_meta"`
		} `json:"params"`
	}
	if json.Unmarshal(raw, &m) != nil {
		return false
	}
	return mcp.IsValidProtocolVersion(m.Params.Meta.ProtocolVersion()) && m.Params.Meta.ClientCapabilities() != nil
}

package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// mcp-go validates tool arguments against the input schema before any handler runs
// (server.WithInputSchemaValidation) and answers a mismatch with an isError result whose
// text renders the validator's internals ("/priority: &{Got:5000/1 Want:1000/1}"). This
// hook rewrites that text into the validator's own English sentences, one per problem, each
// with the argument's path: "invalid arguments: /priority: maximum: got 5,000, want 1,000".
// It runs only for results mcp-go's validation produced; the decision (isError, nothing
// executed) is mcp-go's.

const validationPrefix = "input schema validation failed"

// argMessages compiles input schemas on first use, per tool.
type argMessages struct {
	mu       sync.Mutex
	schemas  map[string][]byte
	compiled map[string]*jsonschema.Schema
}

func newArgMessages(ts []Tool) *argMessages {
	a := &argMessages{schemas: map[string][]byte{}, compiled: map[string]*jsonschema.Schema{}}
	for _, t := range ts {
		a.schemas[t.Tool.Name] = t.Tool.RawInputSchema
	}
	return a
}

func (a *argMessages) install(h *server.Hooks) {
	h.AddAfterCallTool(func(_ context.Context, _ any, req *mcp.CallToolRequest, result any) {
		r, ok := result.(*mcp.CallToolResult)
		if !ok || r == nil || !r.IsError || len(r.Content) != 1 {
			return
		}
		tc, ok := r.Content[0].(mcp.TextContent)
		if !ok || !strings.HasPrefix(tc.Text, validationPrefix) {
			return
		}
		if msg := a.describe(req.Params.Name, req.GetRawArguments()); msg != "" {
			r.Content[0] = mcp.NewTextContent(msg)
		}
	})
}

// describe validates args again and words each problem; "" when it cannot.
func (a *argMessages) describe(tool string, args any) string {
	sch := a.schema(tool)
	if sch == nil {
		return ""
	}
	raw, err := json.Marshal(args)
	if err != nil || string(raw) == "null" {
		raw = []byte("{}")
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return ""
	}
	var verr *jsonschema.ValidationError
	if err := sch.Validate(v); !errors.As(err, &verr) {
		return ""
	}
	p := message.NewPrinter(language.English)
	var parts []string
	for _, leaf := range leaves(verr) {
		where := "/" + strings.Join(leaf.InstanceLocation, "/")
		if where == "/" {
			where = "arguments"
		}
		problem := leaf.ErrorKind.LocalizedString(p)
		if h := hiddenProblem(v, leaf.InstanceLocation); h != "" {
			problem = h
		}
		parts = append(parts, where+": "+problem)
	}
	return "invalid arguments: " + strings.Join(parts, "; ") + " (the tool's input schema describes every field)"
}

func (a *argMessages) schema(tool string) *jsonschema.Schema {
	a.mu.Lock()
	defer a.mu.Unlock()
	if s, ok := a.compiled[tool]; ok {
		return s
	}
	raw := a.schemas[tool]
	var s *jsonschema.Schema
	if doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw)); err == nil {
		c := jsonschema.NewCompiler()
		url := "mem:///" + tool + ".json"
		if c.AddResource(url, doc) == nil {
			s, _ = c.Compile(url)
		}
	}
	a.compiled[tool] = s
	return s
}

func leaves(e *jsonschema.ValidationError) []*jsonschema.ValidationError {
	if len(e.Causes) == 0 {
		return []*jsonschema.ValidationError{e}
	}
	var out []*jsonschema.ValidationError
	for _, c := range e.Causes {
		out = append(out, leaves(c)...)
	}
	return out
}

// hiddenProblem words a schema failure of a string argument that holds a character people
// cannot see (a bidirectional control, a zero-width space: domain.Hidden) by the rule for
// names, which says which character and where, instead of the schema's pattern or enum; ""
// when the value at loc in args is no such string.
func hiddenProblem(args any, loc []string) string {
	v := args
	for _, k := range loc {
		switch x := v.(type) {
		case map[string]any:
			v = x[k]
		case []any:
			i, err := strconv.Atoi(k)
			if err != nil || i < 0 || i >= len(x) {
				return ""
			}
			v = x[i]
		default:
			return ""
		}
	}
	s, _ := v.(string)
	var fe *domain.FieldError
	if !errors.As(domain.CheckName("", "this field", s), &fe) {
		return ""
	}
	return fe.Problem + " (" + fe.Hint + ")"
}

package tools

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"

	"github.com/mark3labs/mcp-go/server"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
)

// Invalid UTF-8 in a request is refused before anything runs. Go's encoding/json replaces
// such bytes by U+FFFD while decoding, so a title or brief would be stored changed without a
// word; the check must see the raw message. mcp-go hands every transport's raw request
// (stdio line, Streamable HTTP body, legacy SSE POST) to the request-initialization hooks
// before it decodes the parameters, and answers a hook's error with a JSON-RPC error
// (-32600) carrying the message: "invalid argument: arguments.title: is not valid UTF-8
// (byte 0xff at offset 87); send text as UTF-8". Nothing is executed or stored. Notifications
// carry no id and get no answer (B01); they are logged.

// installUTF8Check adds the check to h.
func installUTF8Check(h *server.Hooks, log *slog.Logger) {
	h.AddOnRequestInitialization(func(_ context.Context, id any, message any) error {
		raw, ok := message.(json.RawMessage)
		if !ok {
			return nil
		}
		return refuseInvalidUTF8(raw, id, log)
	})
}

// refuseInvalidUTF8 returns the caller-facing error for a raw request that is not UTF-8, nil
// for one that is.
func refuseInvalidUTF8(raw []byte, id any, log *slog.Logger) error {
	err := agent.CheckJSONUTF8(raw)
	var ue *agent.InvalidUTF8Error
	if !errors.As(err, &ue) {
		return nil
	}
	ue.Field = strings.TrimPrefix(ue.Field, "params.")
	log.Warn("refused a request with invalid UTF-8", "id", id, "field", ue.Field, "offset", ue.Offset)
	return errors.New("invalid argument: " + ue.Error())
}

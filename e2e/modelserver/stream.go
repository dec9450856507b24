package modelserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"
)

// anthropicStream renders t as a Messages API stream (agent-clis.md §2, "Mock behaviour
// needed"): message_start, per block content_block_start / _delta / _stop, message_delta with
// the stop reason and output tokens, message_stop.
func anthropicStream(b *bytes.Buffer, r *Request, t Turn, n int) {
	model := r.Model()
	if model == "" {
		model = "claude-mock"
	}
	event(b, "message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": fmt.Sprintf("msg_mock_%d", n), "type": "message", "role": "assistant", "model": model,
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]any{
			"input_tokens": t.Usage.InputTokens, "output_tokens": 0,
			"cache_creation_input_tokens": 0, "cache_read_input_tokens": 0,
		},
	}})
	index := 0
	if t.Text != "" || len(t.Calls) == 0 {
		event(b, "content_block_start", map[string]any{"type": "content_block_start", "index": index,
			"content_block": map[string]any{"type": "text", "text": ""}})
		event(b, "content_block_delta", map[string]any{"type": "content_block_delta", "index": index,
			"delta": map[string]any{"type": "text_delta", "text": t.Text}})
		event(b, "content_block_stop", map[string]any{"type": "content_block_stop", "index": index})
		index++
	}
	for i, c := range t.Calls {
		input := c.Input
		if input == nil {
			input = map[string]any{}
		}
		args, err := json.Marshal(input)
		if err != nil {
			panic(fmt.Sprintf("modelserver: tool input of %s: %v", c.Name, err))
		}
		event(b, "content_block_start", map[string]any{"type": "content_block_start", "index": index,
			"content_block": map[string]any{"type": "tool_use", "id": fmt.Sprintf("toolu_mock_%d_%d", n, i),
				"name": c.Name, "input": map[string]any{}}})
		event(b, "content_block_delta", map[string]any{"type": "content_block_delta", "index": index,
			"delta": map[string]any{"type": "input_json_delta", "partial_json": string(args)}})
		event(b, "content_block_stop", map[string]any{"type": "content_block_stop", "index": index})
		index++
	}
	stop := "end_turn"
	if len(t.Calls) > 0 {
		stop = "tool_use"
	}
	event(b, "message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": t.Usage.OutputTokens}})
	event(b, "message_stop", map[string]any{"type": "message_stop"})
}

// openaiStream renders t as a Responses API stream (agent-clis.md §4): response.created and
// response.in_progress, per output item output_item.added, (for a message) the content part
// and text delta events, output_item.done, then response.completed with the usage.
func openaiStream(b *bytes.Buffer, r *Request, t Turn, n int) {
	model := r.Model()
	if model == "" {
		model = "gpt-mock"
	}
	id := fmt.Sprintf("resp_mock_%d", n)
	seq := 0
	emit := func(name string, data map[string]any) {
		data["type"] = name
		data["sequence_number"] = seq
		seq++
		event(b, name, data)
	}
	response := func(status string, output []any, usage map[string]any) map[string]any {
		return map[string]any{"id": id, "object": "response", "created_at": time.Now().Unix(),
			"status": status, "model": model, "output": output, "usage": usage}
	}
	emit("response.created", map[string]any{"response": response("in_progress", []any{}, nil)})
	emit("response.in_progress", map[string]any{"response": response("in_progress", []any{}, nil)})

	var output []any
	if t.Text != "" {
		msgID := fmt.Sprintf("msg_mock_%d", n)
		part := map[string]any{"type": "output_text", "text": t.Text, "annotations": []any{}}
		idx := len(output)
		emit("response.output_item.added", map[string]any{"output_index": idx, "item": map[string]any{
			"type": "message", "id": msgID, "status": "in_progress", "role": "assistant", "content": []any{}}})
		emit("response.content_part.added", map[string]any{"item_id": msgID, "output_index": idx, "content_index": 0,
			"part": map[string]any{"type": "output_text", "text": "", "annotations": []any{}}})
		emit("response.output_text.delta", map[string]any{"item_id": msgID, "output_index": idx, "content_index": 0, "delta": t.Text})
		emit("response.output_text.done", map[string]any{"item_id": msgID, "output_index": idx, "content_index": 0, "text": t.Text})
		emit("response.content_part.done", map[string]any{"item_id": msgID, "output_index": idx, "content_index": 0, "part": part})
		item := map[string]any{"type": "message", "id": msgID, "status": "completed", "role": "assistant", "content": []any{part}}
		emit("response.output_item.done", map[string]any{"output_index": idx, "item": item})
		output = append(output, item)
	}
	for i, c := range t.Calls {
		item := openaiCallItem(c, n, i)
		idx := len(output)
		emit("response.output_item.added", map[string]any{"output_index": idx, "item": item})
		emit("response.output_item.done", map[string]any{"output_index": idx, "item": item})
		output = append(output, item)
	}
	usage := map[string]any{
		"input_tokens": t.Usage.InputTokens, "input_tokens_details": map[string]any{"cached_tokens": 0},
		"output_tokens": t.Usage.OutputTokens, "output_tokens_details": map[string]any{"reasoning_tokens": 0},
		"total_tokens": t.Usage.InputTokens + t.Usage.OutputTokens,
	}
	emit("response.completed", map[string]any{"response": response("completed", output, usage)})
}

// openaiCallItem is the output item of one tool call: a custom_tool_call for freeform input, a
// function_call otherwise.
func openaiCallItem(c Call, n, i int) map[string]any {
	callID := fmt.Sprintf("call_mock_%d_%d", n, i)
	if c.Freeform != "" {
		return map[string]any{"type": "custom_tool_call", "id": fmt.Sprintf("ctc_mock_%d_%d", n, i),
			"status": "completed", "call_id": callID, "name": c.Name, "input": c.Freeform}
	}
	input := c.Input
	if input == nil {
		input = map[string]any{}
	}
	args, err := json.Marshal(input)
	if err != nil {
		panic(fmt.Sprintf("modelserver: arguments of %s: %v", c.Name, err))
	}
	item := map[string]any{"type": "function_call", "id": fmt.Sprintf("fc_mock_%d_%d", n, i),
		"status": "completed", "call_id": callID, "name": c.Name, "arguments": string(args)}
	if c.Namespace != "" {
		item["namespace"] = c.Namespace
	}
	return item
}

package modelserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"
)

// serve records every request and answers it: model calls through the script, a few stubs
// (count_tokens, models list) for completeness, 404 for the rest.
func (s *Server) serve(w http.ResponseWriter, hr *http.Request) {
	s.handlers.Add(1)
	defer s.handlers.Done()
	body, err := io.ReadAll(hr.Body)
	if err != nil {
		http.Error(w, "read body: "+err.Error(), http.StatusBadRequest)
		return
	}
	r := &Request{
		Method: hr.Method, Path: hr.URL.Path, Query: hr.URL.RawQuery,
		Header: hr.Header.Clone(), Body: body, JSON: decodeJSON(body), At: time.Now(),
	}
	switch {
	case hr.Method == http.MethodPost && r.Path == "/v1/messages":
		r.API = Anthropic
	case hr.Method == http.MethodPost && r.Path == "/v1/responses":
		r.API = OpenAI
	}
	n, script := s.next(r)
	switch {
	case r.API != Other:
		s.answerModel(w, hr, r, n, script)
	case hr.Method == http.MethodPost && r.Path == "/v1/messages/count_tokens":
		writeJSON(w, http.StatusOK, map[string]any{"input_tokens": 100})
	case hr.Method == http.MethodGet && r.Path == "/v1/models":
		writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": []any{}, "has_more": false})
	default:
		writeJSON(w, http.StatusNotFound, map[string]any{"type": "error",
			"error": map[string]any{"type": "not_found_error", "message": "modelserver: no route " + hr.Method + " " + r.Path}})
	}
}

func (s *Server) answerModel(w http.ResponseWriter, hr *http.Request, r *Request, n int, script Script) {
	var t Turn
	if script == nil {
		t = Turn{Err: &APIError{Status: 500, Message: "modelserver: no script set"}}
	} else {
		t = script(r)
	}
	s.mu.Lock()
	r.Reply = t
	s.mu.Unlock()
	if !s.wait(hr.Context(), t.Delay) {
		return
	}
	for k, v := range t.Header {
		w.Header().Set(k, v)
	}
	w.Header().Set("request-id", fmt.Sprintf("req_mock_%d", n))
	w.Header().Set("x-request-id", fmt.Sprintf("req_mock_%d", n))
	if t.Err != nil {
		writeJSON(w, t.Err.Status, errorBody(r.API, *t.Err))
		return
	}
	var sse bytes.Buffer
	if r.API == Anthropic {
		anthropicStream(&sse, r, t, n)
	} else {
		openaiStream(&sse, r, t, n)
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("Content-Length", strconv.Itoa(sse.Len()))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(sse.Bytes()) // a client that went away is not the test's concern here
}

// event writes one server-sent event: "event: <name>\ndata: <json>\n\n".
func event(b *bytes.Buffer, name string, data map[string]any) {
	j, err := json.Marshal(data)
	if err != nil {
		panic(fmt.Sprintf("modelserver: marshal %s: %v", name, err)) // only our own maps
	}
	b.WriteString("event: " + name + "\ndata: ")
	b.Write(j)
	b.WriteString("\n\n")
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	j, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(j)))
	w.WriteHeader(status)
	_, _ = w.Write(j)
}

// errorBody is the JSON error of api for e, with per-status defaults:
// Anthropic {"type":"error","error":{"type","message"}}, OpenAI {"error":{"message","type","code"}}.
func errorBody(api API, e APIError) map[string]any {
	typ, code, msg := e.Type, e.Code, e.Message
	if api == Anthropic {
		if typ == "" {
			typ = anthropicErrorTypes[e.Status]
			if typ == "" {
				typ = "api_error"
			}
		}
		if msg == "" {
			msg = anthropicErrorMessages[typ]
		}
		return map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": msg}}
	}
	d := openaiErrors[e.Status]
	if d == ([3]string{}) {
		d = openaiErrors[500]
	}
	if typ == "" {
		typ = d[0]
	}
	if code == "" {
		code = d[1]
	}
	if msg == "" {
		msg = d[2]
	}
	var c any = code
	if code == "-" {
		c = nil
	}
	return map[string]any{"error": map[string]any{"message": msg, "type": typ, "code": c, "param": nil}}
}

var anthropicErrorTypes = map[int]string{
	400: "invalid_request_error", 401: "authentication_error", 402: "billing_error",
	403: "permission_error", 404: "not_found_error", 413: "request_too_large",
	429: "rate_limit_error", 500: "api_error", 529: "overloaded_error",
}

var anthropicErrorMessages = map[string]string{
	"invalid_request_error": "invalid request",
	"authentication_error":  "invalid x-api-key",
	"billing_error":         "credit balance is too low",
	"permission_error":      "your API key does not have permission to use the specified resource",
	"not_found_error":       "not found",
	"request_too_large":     "request exceeds the maximum allowed size",
	"rate_limit_error":      "rate limited",
	"api_error":             "Internal server error",
	"overloaded_error":      "Overloaded",
}

// openaiErrors: status → {type, code ("-" for null), message}.
var openaiErrors = map[int][3]string{
	400: {"invalid_request_error", "-", "Invalid request."},
	401: {"invalid_request_error", "invalid_api_key", "Incorrect API key provided."},
	403: {"invalid_request_error", "unsupported_country_region_territory", "Forbidden."},
	429: {"requests", "rate_limit_exceeded", "Rate limit reached."},
	500: {"server_error", "-", "The server had an error while processing your request."},
	503: {"server_error", "-", "The engine is currently overloaded, please try again later."},
}

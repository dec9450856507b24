package tools

import (
	"bytes"
	"encoding/json"
	"net/http"
)

// The response writers the session gate (httpgate.go) wraps around mcp-go's.

// trackingWriter notes whether anything was written; it passes Flush through, which mcp-go
// needs to stream SSE.
type trackingWriter struct {
	http.ResponseWriter
	wrote bool
}

func (t *trackingWriter) WriteHeader(code int) { t.wrote = true; t.ResponseWriter.WriteHeader(code) }
func (t *trackingWriter) Write(b []byte) (int, error) {
	t.wrote = true
	return t.ResponseWriter.Write(b)
}
func (t *trackingWriter) Flush() {
	if f, ok := t.ResponseWriter.(http.Flusher); ok {
		t.wrote = true
		f.Flush()
	}
}
func (t *trackingWriter) Unwrap() http.ResponseWriter { return t.ResponseWriter }

// bufferedWriter holds a whole response (an initialize answer, which is small and never
// streamed: it does not implement http.Flusher, so mcp-go answers with JSON).
type bufferedWriter struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (b *bufferedWriter) Header() http.Header { return b.header }
func (b *bufferedWriter) WriteHeader(code int) {
	if b.status == 0 {
		b.status = code
	}
}
func (b *bufferedWriter) Write(p []byte) (int, error) {
	if b.status == 0 {
		b.status = http.StatusOK
	}
	return b.body.Write(p)
}

// refused reports whether the held response is not a JSON-RPC result.
func (b *bufferedWriter) refused() bool {
	if b.status != http.StatusOK {
		return true
	}
	var m struct {
		Result json.RawMessage `json:"result"`
	}
	return json.Unmarshal(b.body.Bytes(), &m) != nil || m.Result == nil
}

func (b *bufferedWriter) writeTo(w http.ResponseWriter) {
	for k, v := range b.header {
		w.Header()[k] = v
	}
	if b.status == 0 {
		b.status = http.StatusOK
	}
	w.WriteHeader(b.status)
	_, _ = w.Write(b.body.Bytes()) // the client is gone if this fails
}

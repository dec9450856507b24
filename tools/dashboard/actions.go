package dashboard

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// The dashboard's actions: each calls the engine operation the matching MCP tool calls
// (resolve_escalation, retry_mission, cancel_mission with skip, approve_landing), so the
// rules and the error texts are the engine's. Bodies are JSON objects (Content-Type
// application/json, which a cross-site form cannot send without a CORS preflight); the
// access rule and the same-origin rule ran before (auth.require).

// maxActionBody bounds an action's body.
const maxActionBody = 16 << 10

// ResolveBody is the body of POST /api/escalations/{id}/resolve.
type ResolveBody struct {
	Action string `json:"action"` // retry | skip | cancel | acknowledge
	Note   string `json:"note,omitempty"`
}

// NoteBody is the body of the mission actions (retry takes none; skip's note is the reason).
type NoteBody struct {
	Note string `json:"note,omitempty"`
}

func (h *Handler) resolve(w http.ResponseWriter, r *http.Request) {
	var b ResolveBody
	if !readBody(w, r, &b) {
		return
	}
	if b.Action == "" {
		writeError(w, http.StatusBadRequest, "action: required (one of retry, skip, cancel, acknowledge)")
		return
	}
	esc, err := h.deps.Engine.ResolveEscalation(r.Context(), r.PathValue("id"), b.Action, b.Note, Actor)
	h.answer(w, esc, err)
}

func (h *Handler) retry(w http.ResponseWriter, r *http.Request) {
	var b NoteBody
	if !readBody(w, r, &b) {
		return
	}
	m, err := h.deps.Engine.Retry(r.Context(), r.PathValue("id"), Actor)
	h.answer(w, m, err)
}

func (h *Handler) skip(w http.ResponseWriter, r *http.Request) {
	var b NoteBody
	if !readBody(w, r, &b) {
		return
	}
	reason := b.Note
	if reason == "" {
		reason = "skipped from the dashboard"
	}
	m, err := h.deps.Engine.Cancel(r.Context(), r.PathValue("id"), reason, true, Actor)
	h.answer(w, m, err)
}

func (h *Handler) approveLanding(w http.ResponseWriter, r *http.Request) {
	var b NoteBody
	if !readBody(w, r, &b) {
		return
	}
	m, err := h.deps.Engine.ApproveLanding(r.Context(), r.PathValue("id"), b.Note, Actor)
	h.answer(w, m, err)
}

// readBody decodes a JSON object into v, answering 415/400 itself when it cannot. An empty
// body is an empty object.
func readBody(w http.ResponseWriter, r *http.Request, v any) bool {
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		writeError(w, http.StatusUnsupportedMediaType, fmt.Sprintf("Content-Type: send application/json, not %q", ct))
		return false
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxActionBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil && !errors.Is(err, io.EOF) {
		writeError(w, http.StatusBadRequest, "body: "+err.Error()+" (send a JSON object such as {\"note\":\"why\"})")
		return false
	}
	return true
}

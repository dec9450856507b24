package tools

import (
	"net/http"

	"github.com/mark3labs/mcp-go/mcp"
)

// Sessions and tokens (docs/configuration.md, "Tokens"): a Streamable HTTP session belongs to
// the bearer token its initialize came with. A request of the session with another token is
// refused (403), and when that token is revoked the session ends, so neither the holder of
// another token nor the revoked agent is served on it again.

// bind records that session id was started with token e (zero: no token configured).
func (t *sessionTable) bind(id string, e namedToken) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if s := t.live[id]; s != nil {
		s.token = e
	}
}

// tokenOf returns the token session id was started with (ok false: not a live session).
func (t *sessionTable) tokenOf(id string) (namedToken, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.live[id]
	if s == nil {
		return namedToken{}, false
	}
	return s.token, true
}

// startedWithout returns the live sessions started with a token that admits refuses.
func (t *sessionTable) startedWithout(admits func(namedToken) bool) []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var ids []string
	for id, s := range t.live {
		if s.token.name != "" && !admits(s.token) {
			ids = append(ids, id)
		}
	}
	return ids
}

// endRevoked ends the sessions whose token left the token set.
func (g *mcpGate) endRevoked(admits func(namedToken) bool) {
	for _, id := range g.table.startedWithout(admits) {
		g.drop(id, "its bearer token was revoked")
	}
}

// sameToken reports whether r carries the token its session sid was started with, and
// otherwise answers 403. An unknown session passes (the gate answers 404 for it).
func (g *mcpGate) sameToken(w http.ResponseWriter, r *http.Request, sid string) bool {
	owner, ok := g.table.tokenOf(sid)
	if !ok || owner == tokenOf(r.Context()) {
		return true
	}
	g.refuse(w, http.StatusForbidden, mcp.INVALID_REQUEST, nil,
		"this session was started with another bearer token: sessions are not shared between tokens; send initialize without "+
			"Mcp-Session-Id to start one of your own", r)
	return false
}

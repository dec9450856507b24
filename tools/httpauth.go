package tools

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"
)

// tokenRecheck is how often the listener re-reads a changed token file by itself, so that a
// revoked token's open streams (GET /mcp, /sse, a waiting claim) end even when no request
// comes.
const tokenRecheck = 2 * time.Second

// errNoBearer is a request without an Authorization: Bearer header.
var errNoBearer = errors.New("send Authorization: Bearer <token>")

// bearer returns the token of r's Authorization: Bearer header.
func bearer(r *http.Request) (string, error) {
	scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(tok) == "" {
		return "", errNoBearer
	}
	return strings.TrimSpace(tok), nil
}

// unauthorized answers 401 with the reason (never the token).
func unauthorized(w http.ResponseWriter, why error) {
	w.Header().Set("WWW-Authenticate", `Bearer realm="mcp-scheduler"`)
	msg := "unauthorized: " + why.Error()
	if !errors.Is(why, errNoBearer) && !errors.Is(why, ErrTokenFileBroken) {
		msg += "; ask the server's operator for a current token"
	}
	http.Error(w, msg, http.StatusUnauthorized)
}

// liveRequests are the requests admitted with a token and not yet answered, so that the ones
// of a revoked token end (their contexts are cancelled with ErrTokenRevoked): a GET stream
// or SSE stream stops being served, a waiting claim gives up.
type liveRequests struct {
	tokens *Tokens
	log    *slog.Logger
	// onRevoke, when set, runs after a sweep that found the set changed (outside the lock):
	// the listener ends the sessions of revoked tokens there.
	onRevoke func(admits func(namedToken) bool)

	mu   sync.Mutex
	seq  uint64
	gen  uint64 // the token set's generation last swept against
	reqs map[uint64]liveRequest
}

type liveRequest struct {
	token  namedToken
	cancel context.CancelCauseFunc
}

func newLiveRequests(t *Tokens, log *slog.Logger) *liveRequests {
	return &liveRequests{tokens: t, log: log, reqs: map[uint64]liveRequest{}}
}

// add registers a request admitted with token e; done unregisters it.
func (l *liveRequests) add(ctx context.Context, e namedToken) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	l.mu.Lock()
	l.seq++
	id := l.seq
	l.reqs[id] = liveRequest{token: e, cancel: cancel}
	l.mu.Unlock()
	return ctx, func() {
		l.mu.Lock()
		delete(l.reqs, id)
		l.mu.Unlock()
		cancel(nil)
	}
}

// sweep ends the requests whose token left the set, when the set changed since the last
// sweep, and then runs onRevoke.
func (l *liveRequests) sweep() {
	if l.cancelRevoked() && l.onRevoke != nil {
		l.onRevoke(l.tokens.admits)
	}
}

// cancelRevoked cancels the requests whose token left the set and reports whether the set
// changed since the last call.
func (l *liveRequests) cancelRevoked() bool {
	gen := l.tokens.generation()
	l.mu.Lock()
	defer l.mu.Unlock()
	if gen == l.gen {
		return false
	}
	l.gen = gen
	for id, r := range l.reqs {
		if !l.tokens.admits(r.token) {
			l.log.Info("ended a request of a revoked token", "token_name", r.token.name)
			r.cancel(ErrTokenRevoked)
			delete(l.reqs, id)
		}
	}
	return true
}

// watch re-reads a changed token file every tokenRecheck until ctx ends and sweeps.
func (l *liveRequests) watch(ctx context.Context) {
	if l.tokens.Path() == "" {
		return
	}
	t := time.NewTicker(tokenRecheck)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			l.tokens.refresh()
			l.sweep()
		}
	}
}

// admit checks r's bearer token and serves it with next, the token's name in its context
// and its context ended if the token is revoked meanwhile; or answers 401.
func (l *liveRequests) admit(w http.ResponseWriter, r *http.Request, next http.Handler) {
	tok, err := bearer(r)
	var e namedToken
	if err == nil {
		e, err = l.tokens.authenticate(tok)
	}
	l.sweep()
	if err != nil {
		unauthorized(w, err)
		return
	}
	ctx, done := l.add(withToken(r.Context(), e), e)
	defer done()
	next.ServeHTTP(w, r.WithContext(ctx))
}

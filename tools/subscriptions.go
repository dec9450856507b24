package tools

import (
	"context"
	"log/slog"
	"maps"
	"slices"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
)

// Resource change notifications reach clients two ways:
//
//   - protocol 2025-11-25 and older: resources/subscribe <uri> on a session, then
//     notifications/resources/updated {uri} on that session's stream;
//   - protocol 2026-07-28: a subscriptions/listen request naming the URIs in
//     notifications.resourceSubscriptions; the notifications travel on that request's
//     stream, tagged with its id in _meta (io.modelcontextprotocol/subscriptionId).
//
// mcp-go acknowledges both but fans out nothing by itself (its sessions do not track
// subscriptions), so this file records them through server hooks and, from the engine's
// change hub, sends one notification per changed URI and subscriber. Changes arrive in
// batches (the hub coalesces bursts), and each batch notifies a URI at most once.

// subscriptions records who listens to which resource URI.
type subscriptions struct {
	mu      sync.Mutex
	legacy  map[string]map[string]bool // session id → subscribed URIs
	listens map[*listenStream]bool
}

// listenStream is one open subscriptions/listen request.
type listenStream struct {
	session server.ClientSession
	id      any
	uris    map[string]bool
}

func newSubscriptions() *subscriptions {
	return &subscriptions{legacy: map[string]map[string]bool{}, listens: map[*listenStream]bool{}}
}

// install registers the hooks that keep the record current.
func (s *subscriptions) install(h *server.Hooks) {
	h.AddAfterSubscribe(func(ctx context.Context, _ any, req *mcp.SubscribeRequest, _ *mcp.EmptyResult) {
		if sess := server.ClientSessionFromContext(ctx); sess != nil && sess.SessionID() != "" {
			s.subscribe(sess.SessionID(), req.Params.URI)
		}
	})
	h.AddAfterUnsubscribe(func(ctx context.Context, _ any, req *mcp.UnsubscribeRequest, _ *mcp.EmptyResult) {
		if sess := server.ClientSessionFromContext(ctx); sess != nil {
			s.unsubscribe(sess.SessionID(), req.Params.URI)
		}
	})
	h.AddOnUnregisterSession(func(_ context.Context, sess server.ClientSession) {
		s.mu.Lock()
		delete(s.legacy, sess.SessionID())
		s.mu.Unlock()
	})
	h.AddBeforeSubscriptionsListen(func(ctx context.Context, id any, req *mcp.SubscriptionsListenRequest) {
		sess := server.ClientSessionFromContext(ctx)
		uris := req.Params.Notifications.ResourceSubscriptions
		if sess == nil || id == nil || len(uris) == 0 {
			return
		}
		l := &listenStream{session: sess, id: id, uris: map[string]bool{}}
		for _, u := range uris {
			l.uris[u] = true
		}
		s.mu.Lock()
		s.listens[l] = true
		s.mu.Unlock()
		// The stream lives as long as its request; no goroutine waits for that.
		context.AfterFunc(ctx, func() {
			s.mu.Lock()
			delete(s.listens, l)
			s.mu.Unlock()
		})
	})
}

func (s *subscriptions) subscribe(sessionID, uri string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.legacy[sessionID] == nil {
		s.legacy[sessionID] = map[string]bool{}
	}
	s.legacy[sessionID][uri] = true
}

func (s *subscriptions) unsubscribe(sessionID, uri string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.legacy[sessionID], uri)
}

// run forwards engine changes to subscribers until ctx ends.
func (s *subscriptions) run(ctx context.Context, hub *engine.Hub, srv *server.MCPServer, log *slog.Logger) error {
	sub := hub.Subscribe()
	defer sub.Close()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-sub.Ready():
		}
		changes, overflow := sub.Take()
		s.notify(srv, changedURIs(changes, overflow), log)
	}
}

// changedURIs lists the resource URIs a batch of changes touches; nil means "everything"
// (the batch overflowed or came from another process, whose ids are unknown).
func changedURIs(changes []engine.Change, overflow bool) map[string]bool {
	if overflow {
		return nil
	}
	out := map[string]bool{StatusURI: true}
	for _, c := range changes {
		if c.Type == engine.ChangeExternal {
			return nil
		}
		if c.MissionID != "" {
			out[missionURI(c.MissionID)] = true
			out[missionLogURI(c.MissionID)] = true
		}
		if c.VoyageID != "" {
			out[voyageURI(c.VoyageID)] = true
		}
	}
	return out
}

// notify sends notifications/resources/updated for every subscribed URI in changed (all
// subscribed URIs when changed is nil).
func (s *subscriptions) notify(srv *server.MCPServer, changed map[string]bool, log *slog.Logger) {
	hit := func(u string) bool { return changed == nil || changed[u] }
	type legacySend struct{ session, uri string }
	var legacy []legacySend
	type listenSend struct {
		l   *listenStream
		uri string
	}
	var listens []listenSend
	s.mu.Lock()
	for sid, uris := range s.legacy {
		for _, u := range slices.Sorted(maps.Keys(uris)) {
			if hit(u) {
				legacy = append(legacy, legacySend{sid, u})
			}
		}
	}
	for l := range s.listens {
		for _, u := range slices.Sorted(maps.Keys(l.uris)) {
			if hit(u) {
				listens = append(listens, listenSend{l, u})
			}
		}
	}
	s.mu.Unlock()
	for _, n := range legacy {
		if err := srv.SendNotificationToSpecificClient(n.session, mcp.MethodNotificationResourceUpdated, map[string]any{"uri": n.uri}); err != nil {
			log.Debug("resource notification not delivered", "session_id", n.session, "uri", n.uri, "err", err)
		}
	}
	for _, n := range listens {
		note := mcp.JSONRPCNotification{JSONRPC: mcp.JSONRPC_VERSION, Notification: mcp.Notification{
			Method: mcp.MethodNotificationResourceUpdated,
			Params: mcp.NotificationParams{Meta: map[string]any{mcp.MetaKeySubscriptionID: n.l.id},
				AdditionalFields: map[string]any{"uri": n.uri}}}}
		if up, ok := n.l.session.(server.SessionWithStreamableHTTPConfig); ok {
			up.UpgradeToSSEWhenReceiveNotification()
		}
		select {
		case n.l.session.NotificationChannel() <- note:
		default:
			log.Debug("resource notification dropped: the listen stream is full", "uri", n.uri)
		}
	}
}

// Package modelserver is a scripted model API for tests: it serves the Anthropic Messages API
// (POST /v1/messages, streamed as server-sent events) and the OpenAI Responses API
// (POST /v1/responses, streamed) on 127.0.0.1 only, so the real Claude Code and Codex CLIs can
// run offline (shared/reference/agent-clis.md §2 and §4, "Mock behaviour needed").
//
// Each test scripts the answers with a Script, a function of the request (helpers build the
// usual ones: a queue, "tool call, then final text", "write file X with content Y", API
// errors), and asserts on the recorded requests afterwards.
//
//	srv := modelserver.Start(t)
//	srv.Script(modelserver.WriteFile("hello.txt", "hi\n", modelserver.Usage{InputTokens: 100, OutputTokens: 20}))
//	// Claude Code: ANTHROPIC_BASE_URL=srv.URL(); Codex: provider base_url srv.OpenAIBaseURL()
package modelserver

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"
)

// Server is one scripted model API on 127.0.0.1:<random port>. Its methods are safe for
// concurrent use.
type Server struct {
	http     *http.Server
	listener net.Listener
	served   chan struct{} // closed when Serve returned
	closing  chan struct{} // closed by Close: delayed replies give up
	handlers sync.WaitGroup

	mu       sync.Mutex
	script   Script
	requests []*Request
	seq      int
	closed   bool
}

// New starts a server listening on 127.0.0.1:0 (never any other interface). Its script
// answers every model request with HTTP 500 until Script is called.
func New() (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("modelserver: listen on 127.0.0.1: %w", err)
	}
	s := &Server{listener: ln, served: make(chan struct{}), closing: make(chan struct{})}
	s.http = &http.Server{Handler: http.HandlerFunc(s.serve), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		defer close(s.served)
		_ = s.http.Serve(ln) // returns http.ErrServerClosed after Close
	}()
	return s, nil
}

// Start is New for tests: it fails t on error and closes the server when t ends.
func Start(t testing.TB) *Server {
	t.Helper()
	s, err := New()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	return s
}

// URL is the server's root, "http://127.0.0.1:PORT". It is the ANTHROPIC_BASE_URL of Claude
// Code (which appends /v1/messages itself).
func (s *Server) URL() string { return "http://" + s.listener.Addr().String() }

// OpenAIBaseURL is the base_url of a Codex custom provider, "http://127.0.0.1:PORT/v1"
// (Codex appends /responses).
func (s *Server) OpenAIBaseURL() string { return s.URL() + "/v1" }

// Addr is the listening address.
func (s *Server) Addr() net.Addr { return s.listener.Addr() }

// Script sets the function that answers every later model request.
func (s *Server) Script(script Script) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script = script
}

// Requests returns every request received so far, model calls and others, in arrival order.
func (s *Server) Requests() []*Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*Request(nil), s.requests...)
}

// ModelRequests returns the requests of one API (Anthropic or OpenAI) in arrival order.
func (s *Server) ModelRequests(api API) []*Request {
	var out []*Request
	for _, r := range s.Requests() {
		if r.API == api {
			out = append(out, r)
		}
	}
	return out
}

// Close stops the server: delayed replies are abandoned, connections closed, and it returns
// once every handler has finished.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.mu.Unlock()
	close(s.closing)
	err := s.http.Close()
	<-s.served
	s.handlers.Wait()
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("modelserver: close: %w", err)
	}
	return nil
}

// wait sleeps d unless the request or the server ends first; it reports whether to go on.
func (s *Server) wait(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-ctx.Done():
	case <-s.closing:
	}
	return false
}

// next returns a fresh number for ids and the current script.
func (s *Server) next(r *Request) (int, Script) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	s.requests = append(s.requests, r)
	return s.seq, s.script
}

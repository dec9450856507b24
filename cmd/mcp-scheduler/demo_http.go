package main

import (
	"context"
	"fmt"
	"net"
	"sync"

	"github.com/mcp-scheduler/mcp-scheduler/tools"
)

// sideHTTP serves the MCP endpoint and the web dashboard on addr beside a command's own work
// (demo --http: a person watches the voyage's graph fill in and its landings appear; daemon
// --http), with tokens as serve --http takes them (nil only on loopback). It returns the base URL
// and a stop function that shuts the listener down and waits for it.
func (a *app) sideHTTP(ctx context.Context, addr string, tokens *tools.Tokens) (base string, stop func(), err error) {
	if err := tools.CheckBind(addr, tokens != nil); err != nil {
		return "", nil, fmt.Errorf("--http: %w", err)
	}
	srv, err := tools.New(a.deps(), tools.Options{Version: buildVersion()})
	if err != nil {
		return "", nil, err
	}
	dash, err := a.dashboard(tokens)
	if err != nil {
		return "", nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	ready := make(chan net.Addr, 1)
	errc := make(chan error, 1)
	var wg sync.WaitGroup
	wg.Go(func() { _ = srv.Run(ctx) })
	wg.Go(func() {
		errc <- srv.ServeHTTP(ctx, tools.HTTPOptions{Addr: addr, Tokens: tokens, AllowedOrigins: a.cfg.HTTP.AllowedOrigins,
			MaxSessions: a.cfg.HTTP.MaxSessions, SessionIdle: a.cfg.HTTP.SessionIdle.D(), Node: a.cfg.nodeName(), Dashboard: dash, Metrics: a.collector().Handler(),
			Ready: func(ad net.Addr) { ready <- ad }})
	})
	stop = func() { cancel(); wg.Wait() }
	select {
	case ad := <-ready:
		return "http://" + ad.String(), stop, nil
	case err := <-errc:
		stop()
		return "", nil, fmt.Errorf("--http: %w", err)
	}
}

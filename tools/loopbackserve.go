package tools

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"
)

// serveLoopback serves mux on addr (already checked to be loopback) until ctx ends, without a
// token, behind the Host and Origin checks of /mcp (against DNS rebinding and foreign pages):
// the stand-alone --pprof and --metrics listeners. name prefixes errors and the log line;
// path is logged; ready, when set, gets the bound address. A request in progress at the end
// is cut short after one second: nothing durable is served here.
func serveLoopback(ctx context.Context, name, addr, path string, mux *http.ServeMux, log *slog.Logger, ready func(net.Addr)) error {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("%s: listen %s: %w", name, addr, err)
	}
	g := &guard{loopback: true, log: log}
	hs := &http.Server{Handler: g.wrap(mux), ReadHeaderTimeout: 10 * time.Second,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	if ready != nil {
		ready(ln.Addr())
	}
	log.Info("serving "+name, "addr", ln.Addr().String(), "path", path)
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("%s: %w", name, err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
	defer cancel()
	_ = hs.Shutdown(sctx)
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// checkLoopbackAddr accepts host:port with a loopback host (127.0.0.1, ::1, localhost) only,
// for the stand-alone listener of flag; a bad form names example, another host wraps
// notLoopback and says what else to do (alternative).
func checkLoopbackAddr(flag, addr, example string, notLoopback error, alternative string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%s %q: %w (give host:port, e.g. %s)", flag, addr, err, example)
	}
	if !isLoopback(host) {
		return fmt.Errorf("%w: %q is not loopback; give 127.0.0.1:PORT (%s)", notLoopback, addr, alternative)
	}
	return nil
}

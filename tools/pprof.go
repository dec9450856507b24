package tools

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
)

// PathPprof is where the Go runtime profiles are served (net/http/pprof's index and its
// named profiles: heap, goroutine, allocs, profile?seconds=N, trace?seconds=N, …).
const PathPprof = "/debug/pprof/"

// ErrPprofNotLoopback is returned by ServePprof for an address other than a loopback one:
// profiles show memory contents and command lines, and the stand-alone listener has no token.
var ErrPprofNotLoopback = errors.New("--pprof must be a loopback address")

// mountPprof adds the profiling endpoints to mux. The caller puts them behind its own guard.
func mountPprof(mux *http.ServeMux) {
	mux.HandleFunc(PathPprof, pprof.Index)
	mux.HandleFunc(PathPprof+"cmdline", pprof.Cmdline)
	mux.HandleFunc(PathPprof+"profile", pprof.Profile)
	mux.HandleFunc(PathPprof+"symbol", pprof.Symbol)
	mux.HandleFunc(PathPprof+"trace", pprof.Trace)
}

// CheckPprofAddr accepts host:port with a loopback host (127.0.0.1, ::1, localhost) only.
func CheckPprofAddr(addr string) error {
	return checkLoopbackAddr("--pprof", addr, "127.0.0.1:6060", ErrPprofNotLoopback,
		"or use serve --http with a token, which serves "+PathPprof+" too")
}

// ServePprof serves /debug/pprof/ on a loopback addr until ctx ends (stdio mode has no HTTP
// listener of its own). The Host check against DNS rebinding applies as on /mcp. ready, when
// set, gets the bound address. It returns ErrPprofNotLoopback for another address.
func ServePprof(ctx context.Context, addr string, log *slog.Logger, ready func(net.Addr)) error {
	if err := CheckPprofAddr(addr); err != nil {
		return err
	}
	mux := http.NewServeMux()
	mountPprof(mux)
	return serveLoopback(ctx, "pprof", addr, PathPprof, mux, log, ready)
}

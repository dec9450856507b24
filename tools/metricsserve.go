package tools

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
)

// PathMetrics is where the Prometheus metrics are served (text exposition format; see
// docs/metrics.md), on the HTTP listener behind its guard and on the stand-alone --metrics one.
const PathMetrics = "/metrics"

// ErrMetricsNotLoopback is returned by ServeMetrics for an address other than a loopback one:
// the stand-alone listener asks for no token, so it must not be reachable from elsewhere.
var ErrMetricsNotLoopback = errors.New("--metrics must be a loopback address")

// CheckMetricsAddr accepts host:port with a loopback host (127.0.0.1, ::1, localhost) only.
func CheckMetricsAddr(addr string) error {
	return checkLoopbackAddr("--metrics", addr, "127.0.0.1:9464", ErrMetricsNotLoopback,
		"or scrape "+PathMetrics+" of serve --http with its token")
}

// ServeMetrics serves h at /metrics on a loopback addr until ctx ends, without a token (for a
// scraper on the same machine), with the Host and Origin checks of /mcp against DNS rebinding
// and foreign pages. ready, when set, gets the bound address. It returns ErrMetricsNotLoopback
// for another address.
func ServeMetrics(ctx context.Context, addr string, h http.Handler, log *slog.Logger, ready func(net.Addr)) error {
	if err := CheckMetricsAddr(addr); err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle(PathMetrics, h)
	return serveLoopback(ctx, "metrics", addr, PathMetrics, mux, log, ready)
}

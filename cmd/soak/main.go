// Command soak churns missions through one real `mcp-scheduler serve` over stdio and prints
// the server's resident memory, threads and open files every sample period, to show whether
// memory stays flat as history grows (docs/benchmarks.md, "Soak"). It is a bench command,
// not a test: it runs for --duration (default 30 minutes).
//
//	go run ./cmd/soak --duration 30m --rate 100
//
// It builds the server from this module unless --bin names one, makes a private repository
// and data dir in a temporary directory, configures the bundled reference agent as the only
// profile, and creates --rate missions a minute, each writing and committing its own file,
// which the scheduler lands on main. With --profiles DIR it saves a heap profile of the
// server (through serve --pprof) at every sample, for `go tool pprof -base`.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// options are the command-line flags.
type options struct {
	bin       string
	duration  time.Duration
	rate      int
	sample    time.Duration
	profiles  string
	keep      bool
	retention string
	pprof     bool
}

func main() {
	var o options
	flag.StringVar(&o.bin, "bin", "", "the mcp-scheduler binary (default: go build ./cmd/mcp-scheduler into the temporary directory)")
	flag.DurationVar(&o.duration, "duration", 30*time.Minute, "how long to churn")
	flag.IntVar(&o.rate, "rate", 100, "missions created per minute")
	flag.DurationVar(&o.sample, "sample", 30*time.Second, "how often to sample the server's memory")
	flag.StringVar(&o.profiles, "profiles", "", "save a heap profile of the server into this directory at every sample")
	flag.BoolVar(&o.keep, "keep", false, "keep the temporary repository and data dir")
	flag.BoolVar(&o.pprof, "pprof", true, "run serve with --pprof to read its Go heap (false: for a binary without the flag)")
	flag.StringVar(&o.retention, "retention", "", "the server's [retention] max_age (default: the server's default)")
	flag.Parse()
	if o.rate < 1 || o.duration <= 0 || o.sample <= 0 {
		fmt.Fprintln(os.Stderr, "soak: --rate must be at least 1, --duration and --sample positive")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(1)
	}
}

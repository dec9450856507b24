package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcp-scheduler/mcp-scheduler/tools"
)

// externalPoll is how often serve looks for changes committed by other processes (a CLI,
// another server on the same data dir), to wake waiting claims and notify subscribers.
const externalPoll = 250 * time.Millisecond

func newServeCmd(a *app) *cobra.Command {
	var httpAddr, token, tokenFile, transport, repo, pprofAddr, metricsAddr string
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve MCP over stdio (default) or HTTP (--http)",
		Long: "Serve the scheduler's MCP tools, resources and prompts.\n\n" +
			"By default it speaks MCP over stdin/stdout, as MCP clients expect (logs go to stderr).\n" +
			"With --http ADDR (or --transport http for [http] addr, default " + tools.DefaultHTTPAddr + ") it serves\n" +
			"Streamable HTTP at /mcp and the legacy SSE transport at /sse. A non-loopback address needs a bearer token\n" +
			"(--token, $" + EnvToken + " or [http] token_file).",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			useHTTP := cmd.Flags().Changed("http")
			switch transport {
			case "http":
				useHTTP = true
			case "stdio":
				if useHTTP && cmd.Flags().Changed("transport") {
					return usageError{fmt.Errorf("--transport stdio contradicts --http")}
				}
			default:
				return usageError{fmt.Errorf("--transport %q: use stdio or http", transport)}
			}
			if httpAddr == "" {
				httpAddr = a.cfg.HTTP.Addr
			}
			if tokenFile != "" {
				a.cfg.HTTP.TokenFile = tokenFile
			}
			if pprofAddr != "" {
				if err := tools.CheckPprofAddr(pprofAddr); err != nil {
					return usageError{err}
				}
			}
			if repo != "" {
				if err := checkRepoFlag(cmd.Context(), repo); err != nil {
					return err
				}
			}
			a.defaultRepoDir = repo
			maddr, err := a.metricsAddr(metricsAddr)
			if err != nil {
				return err
			}
			return a.serve(cmd.Context(), serveOptions{http: useHTTP, addr: httpAddr, token: token, pprof: pprofAddr, metrics: maddr})
		},
	}
	f := cmd.Flags()
	f.StringVar(&httpAddr, "http", "", "serve HTTP on this host:port instead of stdio (port 0: any free port)")
	f.StringVar(&transport, "transport", "stdio", "stdio, or http on the [http] addr of the configuration")
	f.StringVar(&repo, "repo", "", "the default repository of missions that name none (default: the git top level of the working directory)")
	f.StringVar(&token, "token", "", "bearer token HTTP clients must send (prefer $"+EnvToken+" or a token file: flags show in ps)")
	f.StringVar(&tokenFile, "token-file", "", "file of the bearer tokens, a NAME TOKEN line per agent or one bare token (must be private: mode 0600); followed while serving: a removed line is revoked at once")
	f.StringVar(&pprofAddr, "pprof", "", "also serve Go runtime profiles at http://ADDR"+tools.PathPprof+" (loopback only, e.g. 127.0.0.1:6060; --http serves them behind its token)")
	metricsFlag(cmd, &metricsAddr)
	return cmd
}

// serveOptions are serve's flags: the transport, the HTTP address and token, and the
// stand-alone loopback pprof address ("" for none).
type serveOptions struct {
	http               bool
	addr, token, pprof string
	metrics            string // the stand-alone loopback metrics address ("" for none)
}

// serve runs the MCP server until the transport ends (stdin closed) or ctx is cancelled.
func (a *app) serve(ctx context.Context, o serveOptions) error {
	useHTTP, addr := o.http, strings.TrimSpace(o.addr)
	if addr == "" {
		addr = a.cfg.HTTP.Addr
	}
	var tokens *tools.Tokens
	if useHTTP {
		var err error
		if tokens, err = a.tokens(o.token); err != nil {
			return err
		}
		if err := tools.CheckBind(addr, tokens != nil); err != nil {
			return usageError{err} // exit 2, as --metrics and --pprof refuse a non-loopback address
		}
	}
	a.connectLater = true // a PostgreSQL server not up yet: serve meanwhile (storewait.go)
	if err := a.open(ctx); err != nil {
		return err
	}
	l, err := a.openLoop(ctx)
	if err != nil {
		return err
	}
	srv, err := tools.New(a.deps(), tools.Options{Version: buildVersion()})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := srv.Run(ctx); err != nil {
			a.log.Error("change notifications stopped", "err", err)
		}
	})
	wg.Go(func() {
		if err := a.eng.WatchExternal(ctx, externalPoll); err != nil {
			a.log.Error("watching other processes' changes stopped", "err", err)
		}
	})
	if o.pprof != "" {
		wg.Go(func() {
			if err := tools.ServePprof(ctx, o.pprof, a.log.With("component", "pprof"), nil); err != nil {
				a.log.Error("pprof listener stopped", "addr", o.pprof, "err", err)
			}
		})
	}
	a.serveMetrics(ctx, &wg, o.metrics)
	transport := func() error { return a.serveTransport(ctx, srv, useHTTP, addr, tokens) }
	var served chan error // the transport's end, when it was started before the database was open
	if a.storeConnecting() {
		served = make(chan error, 1)
		go func() { served <- transport() }()
		stopped, werr := a.awaitStore(ctx, served)
		if stopped || werr != nil {
			cancel()
			if !stopped {
				<-served
			}
			wg.Wait()
			return werr
		}
	}
	a.recordProfiles(ctx)
	a.warnNoRepository()
	a.sayWhoLeads(ctx, "server")
	// Leads the loop when no other process of this data dir does. Start fails only when the
	// loop runs already (a wiring error): then nothing is served and the error is returned.
	if err = l.s.Start(ctx); err == nil {
		defer a.startNotifier(ctx, l)()
		a.reloadOnHangup(ctx, l.s)
		a.log.Info("mcp-scheduler serving", "version", buildVersion(), "data_dir", a.cfg.DataDir,
			"default_repository", a.repos.defaultRepo, "transport", map[bool]string{true: "http", false: "stdio"}[useHTTP])
		if served == nil {
			err = transport()
		} else {
			err, served = <-served, nil
		}
	}
	cancel()
	if served != nil {
		<-served // Start failed: the transport started early ends with ctx
	}
	wg.Wait()
	if serr := l.s.Stop(context.WithoutCancel(ctx)); serr != nil {
		a.log.Error("stopping the scheduler loop", "err", serr)
	}
	if err == nil || errors.Is(err, context.Canceled) {
		a.log.Info("mcp-scheduler stopped")
		return nil
	}
	return err
}

// serveTransport serves srv over HTTP on addr (with the dashboard) or over stdio until the
// transport ends or ctx is cancelled.
func (a *app) serveTransport(ctx context.Context, srv *tools.Server, useHTTP bool, addr string, tokens *tools.Tokens) error {
	if !useHTTP {
		return srv.ServeStdio(ctx, a.in, a.out)
	}
	dash, err := a.dashboard(tokens)
	if err != nil {
		return err
	}
	return srv.ServeHTTP(ctx, tools.HTTPOptions{Addr: addr, Tokens: tokens, AllowedOrigins: a.cfg.HTTP.AllowedOrigins,
		MaxSessions: a.cfg.HTTP.MaxSessions, SessionIdle: a.cfg.HTTP.SessionIdle.D(), Node: a.cfg.nodeName(), Dashboard: dash,
		Metrics: a.collector().Handler()})
}

// deps wires the tools' services.
func (a *app) deps() tools.Deps {
	budget := a.cfg.Scheduler.RetryBudget
	return tools.Deps{
		Engine:             a.eng,
		Pull:               a.pull(),
		Workspaces:         a.workspaces(),
		Logs:               tools.FileLogs{DataDir: a.cfg.DataDir, Redact: a.redactor()},
		Logger:             a.log.With("component", "mcp"),
		DefaultRetryBudget: budget,
	}
}

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/storage/postgres"
	"github.com/mcp-scheduler/mcp-scheduler/tools/metrics"
)

// streams are a command's standard streams.
type streams struct {
	in       io.Reader
	out, err io.Writer
}

// app is what every command shares: the streams, the global flags, the configuration and,
// once opened, the database and engine.
type app struct {
	streams
	env getenv

	configFlag, dataDirFlag, logLevelFlag string
	jsonOut                               bool

	// defaultRepoDir, when set, replaces the working directory as where the default
	// repository is found (serve --repo).
	defaultRepoDir string

	cfg   Config
	log   *slog.Logger
	level slog.LevelVar
	store engine.Store
	eng   *engine.Engine
	repos *repositories
	loop  *loop // the scheduler loop, when the command runs it (serve, daemon, demo)
	// connectLater: open returns before a PostgreSQL server is reached (serve, which answers
	// its clients meanwhile); pending is that store until then (storewait.go).
	connectLater bool
	pending      *postgres.Pending
	// metrics is the process's Prometheus collector (metrics.go), made by collector().
	metrics *metrics.Collector
}

// commands lists the subcommands, one constructor per file. Add one here to add a command
// (daemon, demo, cleanup and the hidden agent-shim and reference-agent come this way).
var commands = []func(*app) *cobra.Command{
	newServeCmd,
	newGoCmd,
	newStatusCmd,
	newMissionsCmd,
	newEscalationsCmd,
	newVoyagesCmd,
	newEventsCmd,
	newPauseCmd,
	newResumeCmd,
	newDoctorCmd,
	newVersionCmd,
	newDaemonCmd,
	newDemoCmd,
	newCleanupCmd,
	newWatchCmd,
	newMigrateCmd,
	newNodesCmd,
}

func newRootCmd(a *app) *cobra.Command {
	root := &cobra.Command{
		Use:   "mcp-scheduler",
		Short: "Schedule work for AI coding agents (an MCP server and its command line)",
		Long: "mcp-scheduler orders missions, gives each attempt its own git worktree, runs coding agents or lets\n" +
			"MCP clients claim the work, retries within a budget, lands results and escalates blockers.\n\n" +
			"Add it to Claude Code with:  claude mcp add mcp-scheduler -- mcp-scheduler serve",
		SilenceUsage:  true, // usage goes out on request only: in stdio mode stdout is the protocol's
		SilenceErrors: true, // run prints the error once, on stderr
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			return a.setup(cmd)
		},
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return flagError(err) })
	// --version (cobra's, answered before any configuration is read) prints what `version` does
	root.Version = buildVersion()
	root.SetVersionTemplate(versionLine())
	root.Flags().BoolP("version", "v", false, "print the version (as mcp-scheduler version does)")
	pf := root.PersistentFlags()
	pf.StringVar(&a.configFlag, "config", "", "configuration file (default $MCP_SCHEDULER_CONFIG, else $XDG_CONFIG_HOME/mcp-scheduler/config.toml)")
	pf.StringVar(&a.dataDirFlag, "data-dir", "", "data directory (default $MCP_SCHEDULER_DATA_DIR, else $XDG_STATE_HOME/mcp-scheduler)")
	pf.StringVar(&a.logLevelFlag, "log-level", "", "debug, info, warn or error (default info; logs go to stderr)")
	pf.BoolVar(&a.jsonOut, "json", false, "print JSON instead of tables")
	for _, c := range commands {
		root.AddCommand(c(a))
	}
	return root
}

// setup loads and checks the configuration and builds the logger (stderr only).
func (a *app) setup(cmd *cobra.Command) error {
	cfg, err := a.readConfig()
	if err != nil {
		return err
	}
	a.cfg = cfg
	lvl, _ := parseLevel(cfg.LogLevel)
	a.level.Set(lvl)
	a.log = newLogger(a.err, &a.level, a.env)
	return nil
}

// readConfig loads the configuration the command line names (--config, $MCP_SCHEDULER_CONFIG
// or the default path), applies --data-dir and --log-level, and checks it: at start and at
// every reload (reload.go).
func (a *app) readConfig() (Config, error) {
	if _, ok := parseLevel(a.logLevelFlag); !ok {
		return Config{}, usageError{fmt.Errorf("--log-level: %q is not debug, info, warn or error", a.logLevelFlag)}
	}
	path, explicit := a.configFlag, a.configFlag != ""
	if !explicit {
		path, explicit = defaultConfigPath(a.env), a.env(EnvConfig) != ""
	}
	cfg, err := loadConfig(path, explicit, a.env)
	var unreadable *fs.PathError
	if a.configFlag != "" && errors.As(err, &unreadable) {
		return cfg, usageError{fmt.Errorf("--config: cannot read %s: %v (name a TOML file, or leave --config out to use %s)",
			a.configFlag, unreadable.Err, defaultConfigPath(a.env))}
	}
	if err != nil {
		return cfg, err
	}
	if a.dataDirFlag != "" {
		cfg.DataDir = a.dataDirFlag
	}
	if a.logLevelFlag != "" {
		cfg.LogLevel = a.logLevelFlag
	}
	if abs, err := filepath.Abs(cfg.DataDir); err == nil && cfg.DataDir != "" {
		cfg.DataDir = abs
	}
	if err := cfg.validate(); err != nil {
		return cfg, fmt.Errorf("invalid configuration:\n%w", err)
	}
	return cfg, nil
}

// open opens the database (creating the data dir 0700) and the engine.
func (a *app) open(ctx context.Context) error {
	if a.eng != nil {
		return nil
	}
	if err := os.MkdirAll(a.cfg.DataDir, 0o700); err != nil {
		return fmt.Errorf("data dir: %w", err)
	}
	if err := os.Chmod(a.cfg.DataDir, 0o700); err != nil {
		return fmt.Errorf("data dir: %w", err)
	}
	dir := a.defaultRepoDir
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return err
		}
		dir = wd
	} else if _, err := gitTopLevel(ctx, dir); err != nil {
		return fmt.Errorf("--repo %s: %w", dir, err)
	}
	var err error
	if a.repos, err = newRepositories(ctx, &a.cfg, dir); err != nil {
		return err
	}
	st, err := a.openStore(ctx)
	if err != nil {
		return err
	}
	s := a.cfg.Scheduler
	a.store = st
	a.eng = engine.New(st, engine.Options{
		LeaseTTL:          s.LeaseTTL.D(),
		Backoff:           engine.Backoff{Initial: s.BackoffInitial.D(), Max: s.BackoffMax.D()},
		DefaultRepository: a.repos.defaultRepo,
		ResolveRepository: a.repos.resolve,
		DebugAvailable:    debugAvailable(a.cfg.Profiles),
		AbandonLimit:      s.AbandonLimit,
		Logger:            a.log.With("component", "engine"),
		Budgets:           a.cfg.budgets(),
		Observer:          a.collector(),
	})
	return nil
}

func (a *app) close() {
	if a.loop != nil {
		if err := a.loop.close(context.Background()); err != nil && a.log != nil {
			a.log.Error("stopping the scheduler loop", "err", err)
		}
		a.loop = nil
	}
	if a.store != nil {
		if err := a.store.Close(); err != nil && a.log != nil {
			a.log.Error("closing the database", "err", err)
		}
		a.store, a.eng = nil, nil
	}
}

// actor names a command-line user in the event log.
func (a *app) actor() string {
	if u := a.env("USER"); u != "" {
		return "cli:" + u
	}
	return "cli"
}

// usageError marks a command-line mistake (exit code 2).
type usageError struct{ error }

func (u usageError) Unwrap() error { return u.error }

func isUsage(err error) bool {
	var u usageError
	return errors.As(err, &u) || strings.HasPrefix(err.Error(), "unknown command") ||
		strings.HasPrefix(err.Error(), "accepts ") || strings.HasPrefix(err.Error(), "requires ")
}

// version is set at build time (-ldflags "-X main.version=v1.2.3"); otherwise the module's.
var version = ""

// buildVersion is the one version every place shows (`version`, `--version`, the MCP
// server's info, the metrics): the build-time version, else the module's from the build info.
func buildVersion() string {
	if version != "" {
		return version
	}
	bi, ok := debug.ReadBuildInfo()
	return moduleVersion(bi, ok)
}

// moduleVersion is the main module's version in bi: a release tag, or the pseudo-version
// `go build` stamps in a git checkout (it holds the commit, "+dirty" when the tree had
// changes); for a build without one ("(devel)": go run, -buildvcs=false) "dev", followed by
// the vcs revision when the build recorded one ("dev+0123456789ab", ".dirty" when modified).
func moduleVersion(bi *debug.BuildInfo, ok bool) string {
	if !ok {
		return "dev"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if rev == "" {
		return "dev"
	}
	v := "dev+" + rev[:min(len(rev), 12)]
	if modified == "true" {
		v += ".dirty"
	}
	return v
}

// versionLine is what `mcp-scheduler version` and `mcp-scheduler --version` print.
func versionLine() string { return "mcp-scheduler " + buildVersion() + "\n" }

func newVersionCmd(a *app) *cobra.Command {
	return &cobra.Command{Use: "version", Short: "Print the version (the same as --version)", Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if a.jsonOut {
				return writeJSON(a.out, map[string]string{"version": buildVersion()})
			}
			_, err := fmt.Fprint(a.out, versionLine())
			return err
		}}
}

var _ = time.Second

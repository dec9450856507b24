package main

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/engine/scheduler"
	"github.com/mcp-scheduler/mcp-scheduler/storage/postgres"
	"github.com/mcp-scheduler/mcp-scheduler/tools"
)

// Config is the whole configuration: the TOML file (docs/configuration.md describes every
// key), then MCP_SCHEDULER_* environment variables, then command-line flags, each overriding
// the one before. Durations are Go duration strings ("90s", "5m").
type Config struct {
	// DataDir holds the database, worktrees, attempt logs and locks (created 0700).
	DataDir string `toml:"data_dir"`
	// LogLevel is debug, info, warn or error.
	LogLevel string `toml:"log_level"`

	Scheduler    SchedulerConfig    `toml:"scheduler"`
	Resources    ResourcesConfig    `toml:"resources"`
	Retention    RetentionConfig    `toml:"retention"`
	HTTP         HTTPConfig         `toml:"http"`
	Git          GitConfig          `toml:"git"`
	Repositories []RepositoryConfig `toml:"repositories"`
	Profiles     []agent.Profile    `toml:"profiles"`
	// Notify lists the [[notify]] sinks; Notifications tunes their retries (notify.go).
	Notify        []NotifyConfig      `toml:"notify"`
	Notifications NotificationsConfig `toml:"notifications"`
	// Prices turn token counts into US dollars where an agent reports no cost (budgets.go).
	Prices engine.Prices `toml:"prices"`
	// Storage chooses the database (storage_config.go): SQLite in data_dir by default.
	Storage StorageConfig `toml:"storage"`
	// Node names this scheduler node when several share one PostgreSQL store (node_config.go).
	Node NodeConfig `toml:"node"`

	// path is the file the configuration came from ("" when none was found).
	path string
	// unknown lists the file's keys no setting has: validate reports them with every other
	// problem, so that one run names them all.
	unknown []toml.Key
	// env is the environment the configuration was loaded with (secret_env is read from it).
	env getenv
}

// SchedulerConfig tunes leases, retries and the scheduler loop (design brief §10).
type SchedulerConfig struct {
	Tick           agent.Duration `toml:"tick"`
	LeaseTTL       agent.Duration `toml:"lease_ttl"`
	RenewInterval  agent.Duration `toml:"renew_interval"`
	StallThreshold agent.Duration `toml:"stall_threshold"`
	Grace          agent.Duration `toml:"grace"`
	RetryBudget    *int           `toml:"retry_budget"`
	AbandonLimit   int            `toml:"abandon_limit"`
	BackoffInitial agent.Duration `toml:"backoff_initial"`
	BackoffMax     agent.Duration `toml:"backoff_max"`
	UrgentPriority int            `toml:"urgent_priority"`
	MaxConcurrency int            `toml:"max_concurrency"`
	PerRepository  int            `toml:"per_repository"`
	LeaderLease    agent.Duration `toml:"leader_lease"`
	// LandingLockTTL is how long a node's landing lock on a target runs unless renewed
	// (cluster mode only; 3s to 1h, default 1m).
	LandingLockTTL agent.Duration `toml:"landing_lock_ttl"`
	// UnclaimedGrace: a mission no profile can take waits this long for a pull-mode agent to
	// claim it, then is escalated as no_agent.
	UnclaimedGrace agent.Duration `toml:"unclaimed_grace"`
	// RateLimitMargin is added to a rate-limit window's reported reset before its profile's
	// missions start again (1s to 1h, default 30s).
	RateLimitMargin agent.Duration `toml:"rate_limit_margin"`
	// BudgetDay is the time zone whose calendar day the profiles' daily budgets count: "UTC"
	// (the default), "Local", or an IANA name such as "Europe/Paris".
	BudgetDay string `toml:"budget_day"`
}

// ResourcesConfig pauses new dispatch when the machine is short (running work goes on).
type ResourcesConfig struct {
	MaxLoadPerCPU   float64 `toml:"max_load_per_cpu"`
	MinFreeMemoryMB int     `toml:"min_free_memory_mb"`
	MinFreeDiskMB   int     `toml:"min_free_disk_mb"`
}

// RetentionConfig bounds the history kept on disk (docs/configuration.md, [retention]).
type RetentionConfig struct {
	// MaxAge: finished missions, their events and attempt directories older than this are
	// pruned (default 720h, 30 days; 0 keeps everything).
	MaxAge agent.Duration `toml:"max_age"`
	// Batch is how many missions one prune transaction looks at (default 100).
	Batch int `toml:"batch"`
	// BatchPause is the pause between two prune transactions (default 20ms).
	BatchPause agent.Duration `toml:"batch_pause"`
}

// HTTPConfig configures `serve --http`.
type HTTPConfig struct {
	Addr           string   `toml:"addr"`
	TokenFile      string   `toml:"token_file"`
	AllowedOrigins []string `toml:"allowed_origins"`
	// MaxSessions bounds the live Streamable HTTP sessions; past it the longest-idle one is
	// evicted (default 1,000).
	MaxSessions int `toml:"max_sessions"`
	// SessionIdle ends a session that had no request for this long (default 1h).
	SessionIdle agent.Duration `toml:"session_idle"`
	// MetricsAddr, when set, is a loopback host:port where serve and daemon also serve
	// /metrics without a token (the --metrics flag; docs/metrics.md).
	MetricsAddr string `toml:"metrics_addr"`
}

// GitConfig signs the scheduler's own commits (pending work, merges).
type GitConfig struct {
	AuthorName  string `toml:"author_name"`
	AuthorEmail string `toml:"author_email"`
}

// RepositoryConfig is one repository missions may name: a checkout on this machine (Path) or
// a git remote (Remote, with Name or the name derived from the URL), never both.
type RepositoryConfig struct {
	Path         string     `toml:"path"`
	Remote       string     `toml:"remote"`
	Name         string     `toml:"name"`
	TargetBranch string     `toml:"target_branch"`
	Landing      string     `toml:"landing"`
	OnConflict   string     `toml:"on_conflict"`
	Checks       [][]string `toml:"checks"`
	CopyIgnored  []string   `toml:"copy_ignored"`
	WarmPool     int        `toml:"warm_pool"`
}

// Landing policies and conflict policies.
const (
	LandingAuto     = "auto"
	LandingApproval = "approval"
	LandingNone     = "none"
	ConflictRepair  = "repair"
	ConflictBlock   = "block"
)

// Environment variables read by the configuration (flags override them).
const (
	EnvConfig         = "MCP_SCHEDULER_CONFIG"
	EnvDataDir        = "MCP_SCHEDULER_DATA_DIR"
	EnvLogLevel       = "MCP_SCHEDULER_LOG_LEVEL"
	EnvHTTPAddr       = "MCP_SCHEDULER_HTTP_ADDR"
	EnvToken          = "MCP_SCHEDULER_TOKEN"
	EnvTokenFile      = "MCP_SCHEDULER_TOKEN_FILE"
	EnvAllowedOrigins = "MCP_SCHEDULER_ALLOWED_ORIGINS"
	EnvDatabaseURL    = "MCP_SCHEDULER_DATABASE_URL"
)

// getenv is how configuration reads the environment (tests replace it).
type getenv func(string) string

// minLandingLockTTL is the shortest scheduler.landing_lock_ttl: a third of it, the renewal
// period, must leave a database round trip room.
const minLandingLockTTL = 3 * time.Second

// defaults returns the configuration with every default of the design brief §10.
func defaults(env getenv) Config {
	budget := 3
	return Config{
		DataDir:  defaultDataDir(env),
		LogLevel: "info",
		Scheduler: SchedulerConfig{
			Tick: agent.Duration(time.Second), LeaseTTL: agent.Duration(60 * time.Second),
			RenewInterval: agent.Duration(20 * time.Second), StallThreshold: agent.Duration(10 * time.Minute),
			Grace: agent.Duration(time.Second), RetryBudget: &budget, AbandonLimit: 3,
			BackoffInitial: agent.Duration(5 * time.Second), BackoffMax: agent.Duration(5 * time.Minute),
			UrgentPriority: 10, MaxConcurrency: runtime.NumCPU(), PerRepository: 4,
			LeaderLease: agent.Duration(5 * time.Second), UnclaimedGrace: agent.Duration(10 * time.Minute),
			LandingLockTTL:  agent.Duration(scheduler.DefaultLandingLockTTL),
			RateLimitMargin: agent.Duration(30 * time.Second),
		},
		Resources: ResourcesConfig{MaxLoadPerCPU: 2.0, MinFreeMemoryMB: 512, MinFreeDiskMB: 1024},
		Retention: RetentionConfig{MaxAge: agent.Duration(scheduler.DefaultRetention), Batch: engine.DefaultPruneBatch,
			BatchPause: agent.Duration(engine.DefaultPrunePause)},
		HTTP: HTTPConfig{Addr: tools.DefaultHTTPAddr, MaxSessions: tools.DefaultMaxSessions,
			SessionIdle: agent.Duration(tools.DefaultSessionIdle)},
		Git:     GitConfig{AuthorName: "mcp-scheduler", AuthorEmail: "mcp-scheduler@localhost"},
		Storage: StorageConfig{ConnectWait: agent.Duration(postgres.DefaultConnectWait)},
	}
}

// defaultDataDir: $MCP_SCHEDULER_DATA_DIR, else $XDG_STATE_HOME/mcp-scheduler, else
// ~/.local/state/mcp-scheduler.
func defaultDataDir(env getenv) string {
	if d := env(EnvDataDir); d != "" {
		return d
	}
	if d := env("XDG_STATE_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "mcp-scheduler")
	}
	return filepath.Join(homeDir(env), ".local", "state", "mcp-scheduler")
}

// defaultConfigPath: $MCP_SCHEDULER_CONFIG, else $XDG_CONFIG_HOME/mcp-scheduler/config.toml,
// else ~/.config/mcp-scheduler/config.toml.
func defaultConfigPath(env getenv) string {
	if p := env(EnvConfig); p != "" {
		return p
	}
	if d := env("XDG_CONFIG_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "mcp-scheduler", "config.toml")
	}
	return filepath.Join(homeDir(env), ".config", "mcp-scheduler", "config.toml")
}

func homeDir(env getenv) string {
	if h := env("HOME"); h != "" {
		return h
	}
	h, err := os.UserHomeDir()
	if err != nil {
		return "."
	}
	return h
}

// loadConfig reads the configuration: defaults, then the file at path (explicit: must
// exist; default location: a missing file means defaults), then the environment. Unknown
// keys are errors that name them.
func loadConfig(path string, explicit bool, env getenv) (Config, error) {
	c := defaults(env)
	c.env, c.Notifications = env, defaultNotifications()
	if _, err := os.Stat(path); err == nil || explicit {
		md, err := toml.DecodeFile(path, &c)
		if err != nil {
			return c, fmt.Errorf("config %s: %w", path, err)
		}
		c.unknown = md.Undecoded()
		c.path = path
	}
	if v := env(EnvDataDir); v != "" {
		c.DataDir = v
	}
	if v := env(EnvLogLevel); v != "" {
		c.LogLevel = v
	}
	if v := env(EnvHTTPAddr); v != "" {
		c.HTTP.Addr = v
	}
	if v := env(EnvTokenFile); v != "" {
		c.HTTP.TokenFile = v
	}
	if v := env(EnvAllowedOrigins); v != "" {
		c.HTTP.AllowedOrigins = strings.Split(v, ",")
	}
	if v := env(EnvDatabaseURL); v != "" {
		c.Storage.URL = v
	}
	return c, nil
}

// validate reports every problem of c, each naming its key.
func (c *Config) validate() error {
	var errs []error
	bad := func(key, format string, a ...any) { errs = append(errs, fmt.Errorf(key+": "+format, a...)) }
	for _, k := range c.unknown {
		errs = append(errs, unknownKeyError(c.path, k))
	}
	if c.DataDir == "" || !filepath.IsAbs(c.DataDir) {
		bad("data_dir", "%q must be an absolute path", c.DataDir)
	}
	if _, ok := parseLevel(c.LogLevel); !ok {
		bad("log_level", "%q is not debug, info, warn or error", c.LogLevel)
	}
	s := c.Scheduler
	for key, d := range map[string]agent.Duration{"tick": s.Tick, "lease_ttl": s.LeaseTTL, "renew_interval": s.RenewInterval,
		"stall_threshold": s.StallThreshold, "grace": s.Grace, "backoff_initial": s.BackoffInitial,
		"backoff_max": s.BackoffMax, "leader_lease": s.LeaderLease} {
		if d <= 0 {
			bad("scheduler."+key, "%v must be positive", d.D())
		}
	}
	if s.LandingLockTTL < agent.Duration(minLandingLockTTL) || s.LandingLockTTL > agent.Duration(time.Hour) {
		bad("scheduler.landing_lock_ttl", "%v must be %v to 1h (a node renews its landing lock every third of it; the lock of a node that died is taken over after it)",
			s.LandingLockTTL.D(), minLandingLockTTL)
	}
	if s.RenewInterval >= s.LeaseTTL {
		bad("scheduler.renew_interval", "%v must be shorter than lease_ttl %v", s.RenewInterval.D(), s.LeaseTTL.D())
	}
	if s.BackoffMax < s.BackoffInitial {
		bad("scheduler.backoff_max", "%v must not be shorter than backoff_initial %v", s.BackoffMax.D(), s.BackoffInitial.D())
	}
	if s.RetryBudget == nil || *s.RetryBudget < 0 || *s.RetryBudget > 20 {
		bad("scheduler.retry_budget", "must be 0 to 20")
	}
	if s.AbandonLimit < 1 || s.AbandonLimit > 20 {
		bad("scheduler.abandon_limit", "%d must be 1 to 20", s.AbandonLimit)
	}
	if s.UrgentPriority < 1 || s.UrgentPriority > 1000 {
		bad("scheduler.urgent_priority", "%d must be 1 to 1000", s.UrgentPriority)
	}
	if s.MaxConcurrency < 1 {
		bad("scheduler.max_concurrency", "%d must be at least 1", s.MaxConcurrency)
	}
	if s.PerRepository < 1 {
		bad("scheduler.per_repository", "%d must be at least 1", s.PerRepository)
	}
	if s.UnclaimedGrace < agent.Duration(time.Second) {
		bad("scheduler.unclaimed_grace", "%v must be at least 1s", s.UnclaimedGrace.D())
	}
	if m := s.RateLimitMargin.D(); m < time.Second || m > time.Hour {
		bad("scheduler.rate_limit_margin", "%v must be 1s to 1h (a Go duration such as \"30s\")", m)
	}
	r := c.Resources
	if r.MaxLoadPerCPU < 0 || r.MinFreeMemoryMB < 0 || r.MinFreeDiskMB < 0 {
		bad("resources", "limits must not be negative (0 turns a check off)")
	}
	errs = append(errs, c.Retention.validate()...)
	errs = append(errs, c.Storage.validate()...)
	errs = append(errs, c.Node.validate(c.Storage)...)
	if err := tools.CheckBind(c.HTTP.Addr, true); err != nil {
		bad("http.addr", "%v", err)
	}
	if c.HTTP.MetricsAddr != "" {
		if err := tools.CheckMetricsAddr(c.HTTP.MetricsAddr); err != nil {
			bad("http.metrics_addr", "%v", err)
		}
	}
	if c.HTTP.TokenFile != "" && !filepath.IsAbs(c.HTTP.TokenFile) {
		bad("http.token_file", "%q must be an absolute path", c.HTTP.TokenFile)
	}
	if n := c.HTTP.MaxSessions; n < 1 || n > 1_000_000 {
		bad("http.max_sessions", "%d must be 1 to 1000000", n)
	}
	if d := c.HTTP.SessionIdle.D(); d < time.Second || d > 7*24*time.Hour {
		bad("http.session_idle", "%v must be 1s to 168h (a Go duration such as \"1h\")", d)
	}
	for i, o := range c.HTTP.AllowedOrigins {
		if u, err := url.Parse(o); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Path != "" {
			bad(fmt.Sprintf("http.allowed_origins[%d]", i), "%q is not an origin like https://app.example.com", o)
		}
	}
	if c.Git.AuthorName == "" || !strings.Contains(c.Git.AuthorEmail, "@") {
		bad("git", "author_name must be set and author_email must be an address")
	}
	errs = append(errs, c.validateRepositories()...)
	errs = append(errs, c.validateProfiles()...)
	_, notifyErrs := c.sinks(c.env)
	errs = append(errs, notifyErrs...)
	errs = append(errs, c.validateBudgets()...)
	return errors.Join(errs...)
}

func (r RetentionConfig) validate() []error {
	var errs []error
	if r.MaxAge < 0 {
		errs = append(errs, fmt.Errorf("retention.max_age: %v must not be negative (0 keeps all history)", r.MaxAge.D()))
	}
	if r.Batch < 1 || r.Batch > 10000 {
		errs = append(errs, fmt.Errorf("retention.batch: %d must be 1 to 10000", r.Batch))
	}
	if r.BatchPause <= 0 || r.BatchPause.D() > time.Minute {
		errs = append(errs, fmt.Errorf("retention.batch_pause: %v must be positive and at most 1m", r.BatchPause.D()))
	}
	return errs
}

func (c *Config) validateRepositories() []error {
	var errs []error
	seen := map[string]bool{}
	for i, r := range c.Repositories {
		key := fmt.Sprintf("repositories[%d]", i)
		if r.Remote != "" || r.Name != "" {
			errs = append(errs, r.validateRemote(key, seen)...)
		} else {
			if r.Path == "" || !filepath.IsAbs(r.Path) {
				errs = append(errs, fmt.Errorf("%s.path: %q must be an absolute path (or give remote = \"URL\" for a repository named by a git remote)", key, r.Path))
			}
			if seen[filepath.Clean(r.Path)] {
				errs = append(errs, fmt.Errorf("%s.path: %s is listed twice", key, r.Path))
			}
			seen[filepath.Clean(r.Path)] = true
		}
		if r.Landing != "" && !slices.Contains([]string{LandingAuto, LandingApproval, LandingNone}, r.Landing) {
			errs = append(errs, fmt.Errorf("%s.landing: %q is not auto, approval or none", key, r.Landing))
		}
		if r.OnConflict != "" && !slices.Contains([]string{ConflictRepair, ConflictBlock}, r.OnConflict) {
			errs = append(errs, fmt.Errorf("%s.on_conflict: %q is not repair or block", key, r.OnConflict))
		}
		for j, argv := range r.Checks {
			if len(argv) == 0 || argv[0] == "" {
				errs = append(errs, fmt.Errorf("%s.checks[%d]: an empty command (give an argv list such as [\"go\", \"test\", \"./...\"])", key, j))
			}
		}
		if r.WarmPool < 0 || r.WarmPool > 16 {
			errs = append(errs, fmt.Errorf("%s.warm_pool: %d must be 0 to 16", key, r.WarmPool))
		}
	}
	return errs
}

func (c *Config) validateProfiles() []error {
	var errs []error
	seen := map[string]bool{}
	for i, p := range c.Profiles {
		if err := domain.CheckName(fmt.Sprintf("profiles[%d].name", i), "profile names", p.Name); err != nil {
			errs = append(errs, err)
		} else if err := p.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("profiles[%d]: %w", i, err))
		}
		if seen[p.Name] {
			errs = append(errs, fmt.Errorf("profiles[%d].name: %q is used twice", i, p.Name))
		}
		seen[p.Name] = true
	}
	return errs
}

// repository returns the configuration of the repository at top level path (or of the remote
// repository of that name), if any.
func (c *Config) repository(path string) (RepositoryConfig, bool) {
	for _, r := range c.Repositories {
		if r.Remote != "" && r.remoteName() == path || r.Remote == "" && filepath.Clean(r.Path) == path {
			return r, true
		}
	}
	return RepositoryConfig{}, false
}

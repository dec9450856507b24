package agent

import (
	"fmt"
	"regexp"
	"time"
)

// Runtime names how a profile's agent speaks to the scheduler.
type Runtime string

// Runtimes (design brief §1, §7).
const (
	// RuntimeNDJSON: our protocol as is (agent.start on stdin, events on stdout).
	RuntimeNDJSON Runtime = "ndjson"
	// RuntimeClaudeCode: `claude -p … --output-format stream-json --verbose`, stdin closed.
	RuntimeClaudeCode Runtime = "claude-code"
	// RuntimeCodex: `codex exec --json …` with a per-profile CODEX_HOME, stdin closed.
	RuntimeCodex Runtime = "codex"
	// RuntimeCommand: any program; exit status 0 means completed, its output is the log.
	RuntimeCommand Runtime = "command"
)

// Profile says how to launch one kind of managed agent. Profiles come from the
// configuration file only, never from tool arguments (design brief §7): Command and the
// environment are trusted input.
//
// Durations are Go duration strings in TOML ("90s", "10m"). Zero values take the defaults
// of the design brief §10 (see WithDefaults).
type Profile struct {
	// Name identifies the profile: [a-z0-9_-]{1,64}.
	Name string `toml:"name" json:"name"`
	// Runtime selects the adapter.
	Runtime Runtime `toml:"runtime" json:"runtime"`
	// Command is the argv (never a shell string). For claude-code and codex it names the
	// binary and defaults to "claude" and "codex"; adapters append their own flags. Elements
	// may use the placeholders {workspace}, {mission_id}, {attempt}, {epoch}, {brief_file},
	// {model} and {mcp_scheduler} (the absolute path of our own binary, so the bundled
	// reference agent is ["{mcp_scheduler}", "reference-agent"]).
	Command []string `toml:"command" json:"command"`
	// Env is the allow-list of variable names copied from the server's environment
	// (for example PATH, HOME). Nothing else of the server's environment reaches the agent.
	Env []string `toml:"env" json:"env,omitempty"`
	// SetEnv holds fixed variables set for every run of this profile.
	SetEnv map[string]string `toml:"set_env" json:"set_env,omitempty"`
	// SecretEnv names variables (API keys) copied from the server's environment whose values
	// are redacted from logs and events and never stored in the database.
	SecretEnv []string `toml:"secret_env" json:"secret_env,omitempty"`
	// Models this profile may run; the first is its default.
	Models []string `toml:"models" json:"models,omitempty"`
	// Capabilities the profile offers (for example "go", "python", "review").
	Capabilities []string `toml:"capabilities" json:"capabilities,omitempty"`
	// Personas the profile may take (a hard filter); empty means any persona.
	Personas []string `toml:"personas" json:"personas,omitempty"`
	// PreferredPersona is preferred over other profiles for missions of that persona.
	PreferredPersona string `toml:"preferred_persona" json:"preferred_persona,omitempty"`
	// Confidence is the declared success prior in (0, 1], used until history exists.
	Confidence float64 `toml:"confidence" json:"confidence,omitempty"`
	// MaxConcurrency caps this profile's simultaneous attempts (default 2).
	MaxConcurrency int `toml:"max_concurrency" json:"max_concurrency,omitempty"`
	// LimitGroup names the provider usage window this profile shares with others (several
	// profiles on one account): a rejected window pauses every profile of the group. Empty:
	// the profile's own window, by its name.
	LimitGroup string `toml:"limit_group" json:"limit_group,omitempty"`
	// SoftTimeout: after this long the agent is pinged and the event recorded.
	SoftTimeout Duration `toml:"soft_timeout" json:"soft_timeout,omitempty"`
	// HardTimeout: after this long the agent's process group is stopped (0 = none).
	HardTimeout Duration `toml:"hard_timeout" json:"hard_timeout,omitempty"`
	// Grace is the time between SIGTERM and SIGKILL (default 1s).
	Grace Duration `toml:"grace" json:"grace,omitempty"`
	// StallThreshold: no output (stdout or stderr) for this long marks the attempt stalled:
	// the scheduler records it on the mission and pings an ndjson agent (default 10m).
	StallThreshold Duration `toml:"stall_threshold" json:"stall_threshold,omitempty"`
	// StallTimeout: no output for this long stops the agent's process group (failure kind
	// timeout, its last output attached). Default: twice StallThreshold; at least
	// StallThreshold.
	StallTimeout Duration `toml:"stall_timeout" json:"stall_timeout,omitempty"`

	// PermissionMode is Claude Code's --permission-mode (default acceptEdits).
	PermissionMode string `toml:"permission_mode" json:"permission_mode,omitempty"`
	// AllowedTools is Claude Code's --allowedTools list.
	AllowedTools []string `toml:"allowed_tools" json:"allowed_tools,omitempty"`
	// MCPConfig is a path given to Claude Code's --mcp-config (with --strict-mcp-config).
	MCPConfig string `toml:"mcp_config" json:"mcp_config,omitempty"`
	// MaxRetries sets the CLI's own API retry count (CLAUDE_CODE_MAX_RETRIES, Codex
	// request_max_retries and stream_max_retries); nil keeps the CLI's default.
	MaxRetries *int `toml:"max_retries" json:"max_retries,omitempty"`
	// CodexHome is the CODEX_HOME of a codex profile (default <data dir>/codex/<name>).
	CodexHome string `toml:"codex_home" json:"codex_home,omitempty"`
	// Sandbox is Codex's sandbox mode (default workspace-write).
	Sandbox string `toml:"sandbox" json:"sandbox,omitempty"`
	// ExtraArgs are appended to the adapter's argv.
	ExtraArgs []string `toml:"extra_args" json:"extra_args,omitempty"`
	// DailyCostLimitUSD caps what this profile's attempts spend per calendar day, in US
	// dollars (0: no cap); DailyTokenLimit caps their tokens per day (input, cached included,
	// plus output). Crossing one stops the running attempt (failure kind budget) and holds
	// the profile's work until the next day or a raised cap.
	DailyCostLimitUSD float64 `toml:"daily_cost_limit_usd" json:"daily_cost_limit_usd,omitempty"`
	DailyTokenLimit   int64   `toml:"daily_token_limit" json:"daily_token_limit,omitempty"`
}

// RateGroup is the limit group whose usage window p shares: LimitGroup, else its name.
func (p Profile) RateGroup() string {
	if p.LimitGroup != "" {
		return p.LimitGroup
	}
	return p.Name
}

// Defaults from the design brief §10.
const (
	DefaultMaxConcurrency = 2
	DefaultGrace          = time.Second
	DefaultStall          = 10 * time.Minute
	DefaultConfidence     = 0.8
)

var profileName = regexp.MustCompile(`^[a-z0-9_-]{1,64}$`)

// WithDefaults returns p with zero fields set to their defaults.
func (p Profile) WithDefaults() Profile {
	if p.MaxConcurrency == 0 {
		p.MaxConcurrency = DefaultMaxConcurrency
	}
	if p.Grace == 0 {
		p.Grace = Duration(DefaultGrace)
	}
	if p.StallThreshold == 0 {
		p.StallThreshold = Duration(DefaultStall)
	}
	if p.StallTimeout == 0 {
		p.StallTimeout = p.StallThreshold * DefaultStallTimeoutFactor
	}
	if p.Confidence == 0 {
		p.Confidence = DefaultConfidence
	}
	if len(p.Command) == 0 {
		switch p.Runtime {
		case RuntimeClaudeCode:
			p.Command = []string{"claude"}
		case RuntimeCodex:
			p.Command = []string{"codex"}
		}
	}
	return p
}

// Validate reports the first thing wrong with p, naming the field.
func (p Profile) Validate() error {
	if !profileName.MatchString(p.Name) {
		return fmt.Errorf("profile name %q: use 1-64 characters of a-z, 0-9, _ and -", p.Name)
	}
	switch p.Runtime {
	case RuntimeNDJSON, RuntimeCommand:
		if len(p.Command) == 0 {
			return fmt.Errorf("profile %s: runtime %s needs a command (an argv list)", p.Name, p.Runtime)
		}
	case RuntimeClaudeCode, RuntimeCodex:
	default:
		return fmt.Errorf("profile %s: runtime %q is not one of ndjson, claude-code, codex, command", p.Name, p.Runtime)
	}
	if p.Confidence < 0 || p.Confidence > 1 {
		return fmt.Errorf("profile %s: confidence %v must be in [0, 1]", p.Name, p.Confidence)
	}
	if p.MaxConcurrency < 0 {
		return fmt.Errorf("profile %s: max_concurrency %d must not be negative", p.Name, p.MaxConcurrency)
	}
	if err := p.checkTimes(); err != nil {
		return err
	}
	if p.LimitGroup != "" && !profileName.MatchString(p.LimitGroup) {
		return fmt.Errorf("profile %s: limit_group %q: use 1-64 characters of a-z, 0-9, _ and -", p.Name, p.LimitGroup)
	}
	for i, m := range p.Models {
		if err := CheckModel(m); err != nil {
			return fmt.Errorf("profile %s: models[%d]: %w", p.Name, i, err)
		}
	}
	return nil
}

// Duration is a time.Duration that reads and writes Go duration strings ("90s") in TOML and
// JSON.
type Duration time.Duration

// D returns d as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// UnmarshalText parses a Go duration string.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return fmt.Errorf("duration %q: %w (write it like 90s, 10m or 1h30m)", b, err)
	}
	*d = Duration(v)
	return nil
}

// MarshalText writes d as a Go duration string.
func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

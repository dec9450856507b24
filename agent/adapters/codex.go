package adapters

import (
	"bytes"
	"fmt"
	"path/filepath"

	"github.com/BurntSushi/toml"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
)

// Codex conventions (agent-clis.md §4). Codex 0.171 ignores OPENAI_BASE_URL and will not let
// the built-in "openai" provider be redefined, so a profile that points Codex at another
// endpoint does it with this variable in set_env (or the allow-list), and the adapter turns it
// into a custom provider in config.toml.
const (
	// CodexBaseURLEnv names the variable whose value becomes the custom provider's base_url
	// ("http://127.0.0.1:8080/v1": Codex posts to <base_url>/responses).
	CodexBaseURLEnv = "OPENAI_BASE_URL"
	// CodexProviderID is the id of the custom provider the adapter writes.
	CodexProviderID = "mcp-scheduler"
	// CodexDefaultBaseURL is the custom provider's base_url when max_retries alone asks for
	// one (retry settings exist only on providers).
	CodexDefaultBaseURL = "https://api.openai.com/v1"
	// DefaultCodexSandbox is the sandbox_mode of a profile that sets none.
	DefaultCodexSandbox = "workspace-write"
)

// codexKeyEnv are the variables, in order of preference, that the custom provider's env_key
// may name; the first one present in the child's environment is used.
var codexKeyEnv = []string{"OPENAI_API_KEY", "CODEX_API_KEY"}

// codexSandboxes are Codex's sandbox modes.
var codexSandboxes = map[string]bool{"read-only": true, "workspace-write": true, "danger-full-access": true}

// Codex is the adapter of runtime codex (Codex CLI 0.171.0, agent-clis.md §4).
type Codex struct{}

// Invocation builds:
//
//	<command…> exec --json [--model=<model>] [extra_args…] -- <pointer>
//
// with CODEX_HOME set to the profile's codex_home (default <state dir>/codex-home), whose
// config.toml it writes (Invocation.Files): the profile's default model, approval_policy
// "never", sandbox_mode (default workspace-write) and, when the environment has
// OPENAI_BASE_URL or the profile sets max_retries, the custom provider "mcp-scheduler" with
// that base_url, env_key OPENAI_API_KEY (or CODEX_API_KEY), wire_api "responses" and the
// request/stream retry counts. The file depends on the profile and environment only, so
// concurrent attempts of one profile write the same bytes; a mission's own model goes in --model=.
// HOME is private under the state directory unless passed.
func (Codex) Invocation(p agent.Profile, req agent.LaunchRequest) (agent.Invocation, error) {
	if req.BriefFile == "" {
		return agent.Invocation{}, badProfile(p, "codex needs the brief file of the attempt")
	}
	if err := checkModel(p, req); err != nil {
		return agent.Invocation{}, err
	}
	ph := newPlaceholders(p, req)
	command := p.Command
	if len(command) == 0 {
		command = []string{"codex"}
	}
	argv, err := ph.expandAll(p, "command element", command)
	if err != nil {
		return agent.Invocation{}, err
	}
	argv = append(argv, "exec", "--json")
	if m := effectiveModel(p, req); m != "" && m != profileModel(p) {
		argv = append(argv, "--model="+m) // one element: never split, never read as an option
	}
	extra, err := ph.expandAll(p, "extra_args element", p.ExtraArgs)
	if err != nil {
		return agent.Invocation{}, err
	}
	argv = append(argv, extra...)
	argv = append(argv, "--", BriefPointer(req.BriefFile))

	env, err := baseEnv(p, req, ph)
	if err != nil {
		return agent.Invocation{}, err
	}
	home, err := ph.expand(p, "codex_home", p.CodexHome)
	if err != nil {
		return agent.Invocation{}, err
	}
	if home == "" {
		if req.StateDir == "" {
			return agent.Invocation{}, badProfile(p, "codex needs codex_home or a state directory")
		}
		home = filepath.Join(req.StateDir, "codex-home")
	}
	if !filepath.IsAbs(home) {
		return agent.Invocation{}, badProfile(p, "codex_home %q must be an absolute path", home)
	}
	env["CODEX_HOME"] = home
	privateHome(env, req)
	cfg, err := codexConfig(p, env)
	if err != nil {
		return agent.Invocation{}, err
	}
	return agent.Invocation{
		Argv:  argv,
		Env:   env,
		Dir:   req.Start.Workspace,
		Files: map[string][]byte{filepath.Join(home, "config.toml"): cfg},
	}, nil
}

// NewDecoder returns the per-attempt decoder of `codex exec --json` events.
func (Codex) NewDecoder() agent.Decoder { return newCodexDecoder() }

// profileModel is the profile's default model, "" when it lists none.
func profileModel(p agent.Profile) string {
	if len(p.Models) > 0 {
		return p.Models[0]
	}
	return ""
}

type codexConfigFile struct {
	Model          string                   `toml:"model,omitempty"`
	ModelProvider  string                   `toml:"model_provider,omitempty"`
	ApprovalPolicy string                   `toml:"approval_policy"`
	SandboxMode    string                   `toml:"sandbox_mode"`
	ModelProviders map[string]codexProvider `toml:"model_providers,omitempty"`
}

type codexProvider struct {
	Name               string `toml:"name"`
	BaseURL            string `toml:"base_url"`
	EnvKey             string `toml:"env_key,omitempty"`
	RequiresOpenAIAuth bool   `toml:"requires_openai_auth,omitempty"`
	WireAPI            string `toml:"wire_api"`
	RequestMaxRetries  *int   `toml:"request_max_retries,omitempty"`
	StreamMaxRetries   *int   `toml:"stream_max_retries,omitempty"`
}

// codexConfig renders config.toml for profile p whose child environment is env.
func codexConfig(p agent.Profile, env map[string]string) ([]byte, error) {
	sandbox := p.Sandbox
	if sandbox == "" {
		sandbox = DefaultCodexSandbox
	}
	if !codexSandboxes[sandbox] {
		return nil, badProfile(p, "sandbox %q is not one of read-only, workspace-write, danger-full-access", sandbox)
	}
	if p.MaxRetries != nil && *p.MaxRetries < 0 {
		return nil, badProfile(p, "max_retries %d must not be negative", *p.MaxRetries)
	}
	cfg := codexConfigFile{Model: profileModel(p), ApprovalPolicy: "never", SandboxMode: sandbox}
	baseURL := env[CodexBaseURLEnv]
	if baseURL != "" || p.MaxRetries != nil {
		prov := codexProvider{
			Name:              "mcp-scheduler profile " + p.Name,
			BaseURL:           baseURL,
			WireAPI:           "responses",
			RequestMaxRetries: p.MaxRetries,
			StreamMaxRetries:  p.MaxRetries,
		}
		for _, k := range codexKeyEnv {
			if _, ok := env[k]; ok {
				prov.EnvKey = k
				break
			}
		}
		if prov.BaseURL == "" {
			prov.BaseURL = CodexDefaultBaseURL
			// The real OpenAI endpoint without an API key: use the login kept in CODEX_HOME.
			prov.RequiresOpenAIAuth = prov.EnvKey == ""
		}
		cfg.ModelProvider = CodexProviderID
		cfg.ModelProviders = map[string]codexProvider{CodexProviderID: prov}
	}
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "# Written by mcp-scheduler for profile %s before every attempt; edits are overwritten.\n", p.Name)
	if err := toml.NewEncoder(&buf).Encode(cfg); err != nil {
		return nil, fmt.Errorf("profile %s: codex config.toml: %w", p.Name, err)
	}
	return buf.Bytes(), nil
}

package adapters_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
	"github.com/mcp-scheduler/mcp-scheduler/agent/adapters"
)

// longBrief is brief text that must never reach an argv.
var longBrief = strings.Repeat("Implement the parser and its tests. ", 4000)

func launchRequest(t *testing.T) agent.LaunchRequest {
	return agent.LaunchRequest{
		Start: agent.Start{
			Type: agent.TypeStart, Protocol: agent.Version, MissionID: "m-42", Attempt: 3, Epoch: 9,
			Title: "parser", Brief: longBrief, Workspace: "/data/ws/m-42",
		},
		BriefFile: "/data/ws/m-42/.mcp-scheduler/brief.md",
		Self:      "/usr/local/bin/mcp-scheduler",
		StateDir:  "/data/state/profile",
		Env:       map[string]string{"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"},
	}
}

func invocation(t *testing.T, p agent.Profile, req agent.LaunchRequest) agent.Invocation {
	t.Helper()
	a, err := adapters.For(p.Runtime)
	require.NoError(t, err)
	inv, err := a.Invocation(p, req)
	require.NoError(t, err)
	return inv
}

func TestFor_EveryRuntimeAndUnknown(t *testing.T) {
	for rt, want := range map[agent.Runtime]agent.Adapter{
		agent.RuntimeNDJSON: adapters.NDJSON{}, agent.RuntimeCodex: adapters.Codex{}, agent.RuntimeCommand: adapters.Command{},
	} {
		a, err := adapters.For(rt)
		require.NoError(t, err)
		require.Equal(t, want, a)
	}
	a, err := adapters.For(agent.RuntimeClaudeCode)
	require.NoError(t, err)
	require.IsType(t, adapters.ClaudeCode{}, a)
	_, err = adapters.For("bash")
	require.ErrorIs(t, err, adapters.ErrUnknownRuntime)
}

func TestNDJSONInvocation_PlaceholdersPerElementAndProtocolStdin(t *testing.T) {
	p := agent.Profile{Name: "ref", Runtime: agent.RuntimeNDJSON,
		Command:   []string{"{mcp_scheduler}", "reference-agent", "--mission={mission_id}", "--attempt", "{attempt}", "--epoch", "{epoch}"},
		ExtraArgs: []string{"--brief", "{brief_file}", "--in", "{workspace}", "--model", "{model}"},
		Models:    []string{"m-small", "m-big"},
		SetEnv:    map[string]string{"REF_MODE": "edit {mission_id}"},
	}
	inv := invocation(t, p, launchRequest(t))
	require.Equal(t, []string{"/usr/local/bin/mcp-scheduler", "reference-agent", "--mission=m-42", "--attempt", "3", "--epoch", "9",
		"--brief", "/data/ws/m-42/.mcp-scheduler/brief.md", "--in", "/data/ws/m-42", "--model", "m-small"}, inv.Argv)
	require.True(t, inv.ProtocolStdin)
	require.Equal(t, "/data/ws/m-42", inv.Dir)
	require.Equal(t, map[string]string{"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "REF_MODE": "edit m-42"}, inv.Env)
	require.Empty(t, inv.Files)
}

func TestInvocation_PlaceholderValuesAreNotExpandedTwice(t *testing.T) {
	req := launchRequest(t)
	req.Start.MissionID = "{workspace}; $(id) `id`"
	inv := invocation(t, agent.Profile{Name: "c", Runtime: agent.RuntimeCommand, Command: []string{"echo", "{mission_id}"}}, req)
	require.Equal(t, []string{"echo", "{workspace}; $(id) `id`"}, inv.Argv)
	require.False(t, inv.ProtocolStdin)
}

func TestInvocation_UnknownPlaceholderIsAProfileError(t *testing.T) {
	for _, p := range []agent.Profile{
		{Name: "a", Runtime: agent.RuntimeNDJSON, Command: []string{"agent", "--dir={workdir}"}},
		{Name: "b", Runtime: agent.RuntimeCommand, Command: []string{"make"}, ExtraArgs: []string{"{target}"}},
		{Name: "c", Runtime: agent.RuntimeClaudeCode, MCPConfig: "{home}/mcp.json"},
		{Name: "d", Runtime: agent.RuntimeCodex, SetEnv: map[string]string{"X": "{nope}"}},
		{Name: "e", Runtime: agent.RuntimeCodex, CodexHome: "{state}/codex"},
	} {
		a, err := adapters.For(p.Runtime)
		require.NoError(t, err)
		_, err = a.Invocation(p, launchRequest(t))
		require.ErrorIs(t, err, adapters.ErrBadProfile, p.Name)
		require.Contains(t, err.Error(), "unknown placeholder", p.Name)
	}
	// Braces that are not placeholders (JSON, shell-free literals) pass untouched.
	inv := invocation(t, agent.Profile{Name: "j", Runtime: agent.RuntimeCommand,
		Command: []string{"tool", `--settings={"a":1}`, "{}", "{A}"}}, launchRequest(t))
	require.Equal(t, []string{"tool", `--settings={"a":1}`, "{}", "{A}"}, inv.Argv)
}

func TestInvocation_CommandRuntimesNeedACommand(t *testing.T) {
	for _, rt := range []agent.Runtime{agent.RuntimeNDJSON, agent.RuntimeCommand} {
		a, err := adapters.For(rt)
		require.NoError(t, err)
		_, err = a.Invocation(agent.Profile{Name: "x", Runtime: rt}, launchRequest(t))
		require.ErrorIs(t, err, adapters.ErrBadProfile)
	}
}

func TestClaudeInvocation_ArgvOrderFlagsAndEnv(t *testing.T) {
	retries := 2
	p := agent.Profile{Name: "claude", Runtime: agent.RuntimeClaudeCode,
		Models:       []string{"claude-sonnet-9"},
		AllowedTools: []string{"Bash", "mcp__scheduler"},
		MCPConfig:    "{workspace}/.mcp-scheduler/mcp.json",
		ExtraArgs:    []string{"--max-turns", "40"},
		MaxRetries:   &retries,
		SetEnv:       map[string]string{"ANTHROPIC_BASE_URL": "http://127.0.0.1:9/"},
	}
	req := launchRequest(t)
	req.Env["CLAUDECODE"] = "1" // a parent Claude Code's marker, even if allow-listed
	inv := invocation(t, p, req)
	require.Equal(t, []string{
		"claude", "-p", adapters.BriefPointer(req.BriefFile),
		"--output-format", "stream-json", "--verbose", "--permission-mode", "acceptEdits",
		"--model=claude-sonnet-9", "--max-turns", "40",
		"--mcp-config", "/data/ws/m-42/.mcp-scheduler/mcp.json", "--strict-mcp-config",
		"--allowedTools", "Bash,mcp__scheduler",
	}, inv.Argv)
	require.False(t, inv.ProtocolStdin, "claude waits for EOF on an open stdin")
	require.Equal(t, "/data/ws/m-42", inv.Dir)
	require.Equal(t, map[string]string{
		"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8",
		"ANTHROPIC_BASE_URL":                       "http://127.0.0.1:9/",
		"CLAUDE_CODE_MAX_RETRIES":                  "2",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_TELEMETRY": "1", "DISABLE_AUTOUPDATER": "1",
		"HOME": "/data/state/profile/home",
	}, inv.Env)
	require.Empty(t, inv.Files)

	// The mission's model wins; an allow-listed HOME is kept; set_env may override quiet vars.
	req = launchRequest(t)
	req.Start.Model = "claude-opus-9"
	req.Env["HOME"] = "/home/me"
	p.SetEnv = map[string]string{"DISABLE_TELEMETRY": "0"}
	p.MaxRetries = nil
	inv = invocation(t, p, req)
	require.Equal(t, "--model=claude-opus-9", inv.Argv[8])
	require.Equal(t, "/home/me", inv.Env["HOME"])
	require.Equal(t, "0", inv.Env["DISABLE_TELEMETRY"])
	require.NotContains(t, inv.Env, "CLAUDE_CODE_MAX_RETRIES")
}

func TestClaudeInvocation_DefaultsAndBriefFileRequired(t *testing.T) {
	inv := invocation(t, agent.Profile{Name: "c", Runtime: agent.RuntimeClaudeCode}, launchRequest(t))
	require.Equal(t, []string{"claude", "-p", adapters.BriefPointer("/data/ws/m-42/.mcp-scheduler/brief.md"),
		"--output-format", "stream-json", "--verbose", "--permission-mode", "acceptEdits"}, inv.Argv)

	req := launchRequest(t)
	req.BriefFile = ""
	_, err := adapters.NewClaudeCode().Invocation(agent.Profile{Name: "c", Runtime: agent.RuntimeClaudeCode}, req)
	require.ErrorIs(t, err, adapters.ErrBadProfile)
	_, err = adapters.Codex{}.Invocation(agent.Profile{Name: "c", Runtime: agent.RuntimeCodex}, req)
	require.ErrorIs(t, err, adapters.ErrBadProfile)
}

func TestCodexInvocation_ArgvEnvAndConfigWithCustomProvider(t *testing.T) {
	retries := 0
	p := agent.Profile{Name: "codex", Runtime: agent.RuntimeCodex,
		Command:    []string{"/opt/codex/bin/codex"},
		Models:     []string{"gpt-5.5"},
		MaxRetries: &retries,
		ExtraArgs:  []string{"--ephemeral"},
		SetEnv:     map[string]string{"OPENAI_BASE_URL": "http://127.0.0.1:8080/v1"},
	}
	req := launchRequest(t)
	req.Env["OPENAI_API_KEY"] = "sk-test" // a secret_env the runner copied
	inv := invocation(t, p, req)
	require.Equal(t, []string{"/opt/codex/bin/codex", "exec", "--json", "--ephemeral", "--",
		adapters.BriefPointer(req.BriefFile)}, inv.Argv)
	require.False(t, inv.ProtocolStdin)
	require.Equal(t, map[string]string{
		"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "OPENAI_API_KEY": "sk-test",
		"OPENAI_BASE_URL": "http://127.0.0.1:8080/v1",
		"CODEX_HOME":      "/data/state/profile/codex-home",
		"HOME":            "/data/state/profile/home",
	}, inv.Env)
	require.Equal(t, `# Written by mcp-scheduler for profile codex before every attempt; edits are overwritten.
model = "gpt-5.5"
model_provider = "mcp-scheduler"
approval_policy = "never"
sandbox_mode = "workspace-write"

[model_providers]
  [model_providers.mcp-scheduler]
    name = "mcp-scheduler profile codex"
    base_url = "http://127.0.0.1:8080/v1"
    env_key = "OPENAI_API_KEY"
    wire_api = "responses"
    request_max_retries = 0
    stream_max_retries = 0
`, string(inv.Files["/data/state/profile/codex-home/config.toml"]))
	require.Len(t, inv.Files, 1)

	// The mission's own model goes on the command line; the config stays the profile's.
	req.Start.Model = "gpt-5.5-mini"
	inv2 := invocation(t, p, req)
	require.Equal(t, []string{"/opt/codex/bin/codex", "exec", "--json", "--model=gpt-5.5-mini", "--ephemeral", "--",
		adapters.BriefPointer(req.BriefFile)}, inv2.Argv)
	require.Equal(t, inv.Files, inv2.Files, "concurrent attempts of a profile write the same config.toml")
}

func TestCodexInvocation_ConfigVariants(t *testing.T) {
	decode := func(t *testing.T, inv agent.Invocation) map[string]any {
		var cfg map[string]any
		_, err := toml.Decode(string(inv.Files[filepath.Join(inv.Env["CODEX_HOME"], "config.toml")]), &cfg)
		require.NoError(t, err)
		return cfg
	}
	t.Run("no endpoint, no retries: built-in provider, defaults", func(t *testing.T) {
		inv := invocation(t, agent.Profile{Name: "cx", Runtime: agent.RuntimeCodex}, launchRequest(t))
		require.Equal(t, "codex", inv.Argv[0])
		require.Equal(t, map[string]any{"approval_policy": "never", "sandbox_mode": "workspace-write"}, decode(t, inv))
	})
	t.Run("retries without endpoint: OpenAI URL and the CODEX_HOME login", func(t *testing.T) {
		n := 3
		cfg := decode(t, invocation(t, agent.Profile{Name: "cx", Runtime: agent.RuntimeCodex, MaxRetries: &n, Sandbox: "danger-full-access"}, launchRequest(t)))
		require.Equal(t, "danger-full-access", cfg["sandbox_mode"])
		require.Equal(t, map[string]any{"name": "mcp-scheduler profile cx", "base_url": adapters.CodexDefaultBaseURL,
			"requires_openai_auth": true, "wire_api": "responses", "request_max_retries": int64(3), "stream_max_retries": int64(3)},
			cfg["model_providers"].(map[string]any)["mcp-scheduler"])
	})
	t.Run("allow-listed base URL and CODEX_API_KEY", func(t *testing.T) {
		req := launchRequest(t)
		req.Env["OPENAI_BASE_URL"] = "https://proxy.internal/v1"
		req.Env["CODEX_API_KEY"] = "k"
		cfg := decode(t, invocation(t, agent.Profile{Name: "cx", Runtime: agent.RuntimeCodex}, req))
		prov := cfg["model_providers"].(map[string]any)["mcp-scheduler"].(map[string]any)
		require.Equal(t, "https://proxy.internal/v1", prov["base_url"])
		require.Equal(t, "CODEX_API_KEY", prov["env_key"])
		require.NotContains(t, prov, "request_max_retries")
	})
	t.Run("explicit codex_home with placeholders", func(t *testing.T) {
		inv := invocation(t, agent.Profile{Name: "cx", Runtime: agent.RuntimeCodex, CodexHome: "/srv/codex/{mission_id}"}, launchRequest(t))
		require.Equal(t, "/srv/codex/m-42", inv.Env["CODEX_HOME"])
		require.Contains(t, inv.Files, "/srv/codex/m-42/config.toml")
	})
	t.Run("bad settings", func(t *testing.T) {
		neg := -1
		for _, p := range []agent.Profile{
			{Name: "s", Runtime: agent.RuntimeCodex, Sandbox: "yolo"},
			{Name: "r", Runtime: agent.RuntimeCodex, MaxRetries: &neg},
			{Name: "h", Runtime: agent.RuntimeCodex, CodexHome: "relative/dir"},
		} {
			_, err := adapters.Codex{}.Invocation(p, launchRequest(t))
			require.ErrorIs(t, err, adapters.ErrBadProfile, p.Name)
		}
		req := launchRequest(t)
		req.StateDir = ""
		_, err := adapters.Codex{}.Invocation(agent.Profile{Name: "n", Runtime: agent.RuntimeCodex}, req)
		require.ErrorIs(t, err, adapters.ErrBadProfile)
	})
}

// No adapter passes anything of the server's own environment that the allow-list did not,
// no argv element carries the brief, and none is a shell.
func TestInvocation_EnvAllowListArgvPointerOnlyNoShell(t *testing.T) {
	t.Setenv("MCP_SCHEDULER_CANARY", "leak")
	t.Setenv("CLAUDECODE", "1")
	t.Setenv("ANTHROPIC_BASE_URL", "http://client-endpoint.invalid")
	additions := map[agent.Runtime][]string{
		agent.RuntimeClaudeCode: {"CLAUDE_CODE_MAX_RETRIES", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "DISABLE_TELEMETRY", "DISABLE_AUTOUPDATER", "IS_SANDBOX", "HOME"},
		agent.RuntimeCodex:      {"CODEX_HOME", "HOME"},
	}
	n := 1
	for _, rt := range []agent.Runtime{agent.RuntimeNDJSON, agent.RuntimeClaudeCode, agent.RuntimeCodex, agent.RuntimeCommand} {
		p := agent.Profile{Name: "p", Runtime: rt, Command: []string{"agent-bin", "{brief_file}"}, MaxRetries: &n,
			PermissionMode: "bypassPermissions", SetEnv: map[string]string{"FIXED": "1"}}
		req := launchRequest(t)
		inv := invocation(t, p, req)
		allowed := map[string]bool{"FIXED": true}
		for k := range req.Env {
			allowed[k] = true
		}
		for _, k := range additions[rt] {
			allowed[k] = true
		}
		for k, v := range inv.Env {
			require.True(t, allowed[k], "%s: %s=%s is neither allow-listed, set_env nor an adapter addition", rt, k, v)
		}
		for k, v := range req.Env {
			require.Equal(t, v, inv.Env[k], "%s keeps %s", rt, k)
		}
		require.NotEqual(t, "sh", filepath.Base(inv.Argv[0]))
		require.NotEqual(t, "bash", filepath.Base(inv.Argv[0]))
		total := 0
		for _, a := range inv.Argv {
			require.NotContains(t, a, "Implement the parser", "%s: brief text in argv", rt)
			total += len(a)
		}
		require.Less(t, total, 1024, "%s: argv is a short pointer, not the brief", rt)
	}
}

// A mission id with shell syntax reaches a real program as one literal argument: no shell
// ever interprets it, and the file it names is never created.
func TestB33_ShellSyntaxInPlaceholdersStaysLiteral(t *testing.T) {
	dir := t.TempDir()
	pwned := filepath.Join(dir, "pwned")
	req := launchRequest(t)
	req.Start.MissionID = "x; touch " + pwned + " $(touch " + pwned + ") `touch " + pwned + "`"
	req.Start.Workspace = dir
	req.Env = map[string]string{"PATH": os.Getenv("PATH")}
	p := agent.Profile{Name: "c", Runtime: agent.RuntimeCommand, Command: []string{"printf", "%s\\n", "{mission_id}"}}
	inv := invocation(t, p, req)
	r := launch(t, adapters.Command{}, inv, nil)
	require.Equal(t, agent.StatusCompleted, r.result.Status, r.stderr)
	require.Equal(t, []agent.Message{{Type: agent.TypeLog, Level: "info", Message: req.Start.MissionID}}, r.msgs)
	_, err := os.Stat(pwned)
	require.True(t, errors.Is(err, os.ErrNotExist), "no shell ran: %s must not exist", pwned)
}

// A model name that would read as an option, or carries a control character, never reaches
// an argv: every runtime refuses the attempt, whether the mission or the profile named it.
func TestInvocation_BadModelNeverReachesArgv(t *testing.T) {
	profiles := []agent.Profile{
		{Name: "claude", Runtime: agent.RuntimeClaudeCode},
		{Name: "codex", Runtime: agent.RuntimeCodex},
		{Name: "nd", Runtime: agent.RuntimeNDJSON, Command: []string{"agent", "--model={model}"}},
		{Name: "cmd", Runtime: agent.RuntimeCommand, Command: []string{"agent", "{model}"}},
	}
	for _, p := range profiles {
		for _, bad := range []string{"--dangerously-skip-permissions", "-x", "gpt\n--yolo", "a\x00b", "m\x7f", strings.Repeat("m", agent.MaxModelLen+1)} {
			req := launchRequest(t)
			req.Start.Model = bad
			a, err := adapters.For(p.Runtime)
			require.NoError(t, err)
			inv, err := a.Invocation(p, req)
			require.Error(t, err, "%s with model %q", p.Name, bad)
			require.Contains(t, err.Error(), "mission m-42: model", "%s: %v", p.Name, err)
			require.Empty(t, inv.Argv)

			fromProfile := p
			fromProfile.Models = []string{"gpt-5.5", bad}
			_, err = a.Invocation(fromProfile, launchRequest(t))
			require.ErrorIs(t, err, adapters.ErrBadProfile, "%s with profile model %q", p.Name, bad)
		}
	}
}

// The model travels as one --model=<name> element, so a name can never be split or become a
// flag of its own, whatever it looks like.
func TestInvocation_ModelIsOneElement(t *testing.T) {
	for _, p := range []agent.Profile{{Name: "claude", Runtime: agent.RuntimeClaudeCode}, {Name: "codex", Runtime: agent.RuntimeCodex}} {
		req := launchRequest(t)
		req.Start.Model = "us.anthropic.claude-3-7-sonnet-20250219-v1:0"
		inv := invocation(t, p, req)
		require.Contains(t, inv.Argv, "--model=us.anthropic.claude-3-7-sonnet-20250219-v1:0", p.Name)
		require.NotContains(t, inv.Argv, "--model", p.Name)
		require.NotContains(t, inv.Argv, "-m", p.Name)
	}
}

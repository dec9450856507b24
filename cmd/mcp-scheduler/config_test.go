package main

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
	"github.com/mcp-scheduler/mcp-scheduler/agent/runner"
	"github.com/mcp-scheduler/mcp-scheduler/e2e/testenv"
	"github.com/mcp-scheduler/mcp-scheduler/tools"
)

func envOf(kv map[string]string) getenv { return func(k string) string { return kv[k] } }

func TestConfig_DefaultsAndPaths(t *testing.T) {
	t.Parallel()
	c := defaults(envOf(map[string]string{"HOME": "/home/u"}))
	require.Equal(t, "/home/u/.local/state/mcp-scheduler", c.DataDir)
	require.Equal(t, 60*time.Second, c.Scheduler.LeaseTTL.D())
	require.Equal(t, 20*time.Second, c.Scheduler.RenewInterval.D())
	require.Equal(t, 3, *c.Scheduler.RetryBudget)
	require.Equal(t, runtime.NumCPU(), c.Scheduler.MaxConcurrency)
	require.Equal(t, 4, c.Scheduler.PerRepository)
	require.Equal(t, 5*time.Second, c.Scheduler.LeaderLease.D())
	require.Equal(t, "127.0.0.1:8765", c.HTTP.Addr)
	require.NoError(t, c.validate())

	require.Equal(t, "/s/mcp-scheduler", defaultDataDir(envOf(map[string]string{"XDG_STATE_HOME": "/s", "HOME": "/h"})))
	require.Equal(t, "/d", defaultDataDir(envOf(map[string]string{EnvDataDir: "/d", "XDG_STATE_HOME": "/s"})))
	require.Equal(t, "/h/.local/state/mcp-scheduler", defaultDataDir(envOf(map[string]string{"XDG_STATE_HOME": "relative", "HOME": "/h"})))
	require.Equal(t, "/c/mcp-scheduler/config.toml", defaultConfigPath(envOf(map[string]string{"XDG_CONFIG_HOME": "/c"})))
	require.Equal(t, "/x.toml", defaultConfigPath(envOf(map[string]string{EnvConfig: "/x.toml", "XDG_CONFIG_HOME": "/c"})))
	require.Equal(t, "/h/.config/mcp-scheduler/config.toml", defaultConfigPath(envOf(map[string]string{"HOME": "/h"})))
}

func writeConfig(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "config.toml")
	require.NoError(t, os.WriteFile(p, []byte(body), 0o600))
	return p
}

func TestConfig_FileThenEnv(t *testing.T) {
	t.Parallel()
	p := writeConfig(t, `
data_dir = "/from/file"
log_level = "debug"
[scheduler]
lease_ttl = "90s"
retry_budget = 5
max_concurrency = 3
[http]
addr = "127.0.0.1:9999"
allowed_origins = ["https://app.example.com"]
[[repositories]]
path = "/src/api"
landing = "approval"
checks = [["go", "test", "./..."]]
[[profiles]]
name = "claude"
runtime = "claude-code"
`)
	c, err := loadConfig(p, true, envOf(map[string]string{EnvLogLevel: "warn"}))
	require.NoError(t, err)
	require.NoError(t, c.validate())
	require.Equal(t, "/from/file", c.DataDir)
	require.Equal(t, "warn", c.LogLevel, "the environment overrides the file")
	require.Equal(t, 90*time.Second, c.Scheduler.LeaseTTL.D())
	require.Equal(t, 5, *c.Scheduler.RetryBudget)
	require.Equal(t, 20*time.Second, c.Scheduler.RenewInterval.D(), "keys the file leaves out keep their defaults")
	require.Equal(t, "approval", c.Repositories[0].Landing)
	require.Equal(t, [][]string{{"go", "test", "./..."}}, c.Repositories[0].Checks)
	require.Equal(t, p, c.path)

	missing := filepath.Join(t.TempDir(), "none.toml")
	_, err = loadConfig(missing, true, envOf(nil))
	require.Error(t, err, "a file named explicitly must exist")
	c, err = loadConfig(missing, false, envOf(map[string]string{"HOME": "/h"}))
	require.NoError(t, err, "a missing file at the default place means defaults")
	require.Empty(t, c.path)
}

func TestConfig_ErrorsNameTheKey(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		`colour = "red"`:                                                   "unknown key colour",
		"[scheduler]\nticks = \"1s\"":                                      "unknown key scheduler.ticks",
		"[scheduler]\ntick = \"soon\"":                                     "soon",
		"[scheduler]\nlease_ttl = \"10s\"\nrenew_interval = \"20s\"":       "scheduler.renew_interval",
		"[scheduler]\nretry_budget = 50":                                   "scheduler.retry_budget",
		"[scheduler]\nlanding_lock_ttl = \"1s\"":                           "scheduler.landing_lock_ttl: 1s must be 3s to 1h",
		"[scheduler]\nlanding_lock_ttl = \"2h\"":                           "scheduler.landing_lock_ttl: 2h0m0s must be 3s to 1h",
		"[scheduler]\nlanding_lock_ttl = \"soon\"":                         "soon",
		"[scheduler]\nmax_concurrency = 0":                                 "scheduler.max_concurrency",
		"[scheduler]\nbackoff_max = \"1s\"":                                "scheduler.backoff_max",
		`log_level = "loud"`:                                               "log_level",
		`data_dir = "relative/dir"`:                                        "data_dir",
		"[http]\naddr = \"nohost\"":                                        "http.addr",
		"[http]\ntoken_file = \"token\"":                                   "http.token_file",
		"[http]\nallowed_origins = [\"*\"]":                                "http.allowed_origins[0]",
		"[[repositories]]\npath = \"rel\"":                                 "repositories[0].path",
		"[[repositories]]\npath = \"/a\"\nlanding = \"yolo\"":              "repositories[0].landing",
		"[[repositories]]\npath = \"/a\"\non_conflict = \"x\"":             "repositories[0].on_conflict",
		"[[repositories]]\npath = \"/a\"\nchecks = [[]]":                   "repositories[0].checks[0]",
		"[[repositories]]\npath = \"/a\"\n[[repositories]]\npath = \"/a\"": "repositories[1].path",
		// a repository named by a git remote
		"[[repositories]]\npath = \"/a\"\nremote = \"/srv/shop.git\"":                        "repositories[0]: path and remote are both set",
		"[[repositories]]\nname = \"shop\"":                                                  "repositories[0].name: \"shop\" is set without remote",
		"[[repositories]]\nremote = \"/\"":                                                   "repositories[0].remote: no name can be derived from \"/\": give name",
		"[[repositories]]\nremote = \"/srv/shop.git\"\nname = \"a/b\"":                       "repositories[0]: remote repository name \"a/b\" must match",
		"[[repositories]]\nremote = \"ext::sh -c x\"\nname = \"x\"":                          "repositories[0]: remote repository x: URL \"ext::sh -c x\" names a git remote helper",
		"[[repositories]]\nremote = \"ftp://h/shop.git\"":                                    "repositories[0]: remote repository shop: URL scheme \"ftp\"",
		"[[repositories]]\nremote = \"ssh://-oProxyCommand=touch%20x/shop.git\"":             "repositories[0]: remote repository shop: URL \"ssh://-oProxyCommand=touch%20x/shop.git\" has a user or host starting with '-'",
		"[[repositories]]\nremote = \"-oProxyCommand=x@h:shop.git\"\nname = \"shop\"":        "starts with '-'",
		"[[repositories]]\nremote = \"git@-oProxyCommand=x:shop.git\"":                       "has a user or host starting with '-'",
		"[[repositories]]\nremote = \"/a/shop.git\"\n[[repositories]]\nremote = \"/b/shop\"": "repositories[1].name: \"shop\" names two repositories",
		"[[profiles]]\nname = \"Bad Name\"\nruntime = \"ndjson\"":                            "profiles[0]",
		// names people read refuse what does not show (issue 28), naming the key and the character
		"[[profiles]]\nname = \"x\\u202e\"\nruntime = \"codex\"":                                           "profiles[0].name: contains U+202E (RIGHT-TO-LEFT OVERRIDE) at character 2: control characters, bidirectional controls and invisible characters are not allowed in profile names (remove it)",
		"[[repositories]]\nremote = \"/srv/shop.git\"\nname = \"sh\\u200bop\"":                             "repositories[0].name: contains U+200B (ZERO WIDTH SPACE) at character 3: ",
		"[[profiles]]\nname = \"x\"\nruntime = \"telepathy\"":                                              "profiles[0]",
		"[[profiles]]\nname = \"x\"\nruntime = \"ndjson\"":                                                 "needs a command",
		"[[profiles]]\nname = \"x\"\nruntime = \"codex\"\n[[profiles]]\nname = \"x\"\nruntime = \"codex\"": "profiles[1].name",
		"[git]\nauthor_email = \"nobody\"":                                                                 "git",
		// a model name reaches an agent's argv: never an option, never a control character
		"[[profiles]]\nname = \"x\"\nruntime = \"codex\"\nmodels = [\"gpt-5.5\", \"--yolo\"]": `profiles[0]: profile x: models[1]: "--yolo" starts with "-"`,
		"[[profiles]]\nname = \"x\"\nruntime = \"codex\"\nmodels = [\"gpt\\u0007\"]":          "models[0]: \"gpt\\a\" holds a control character",
		// invalid UTF-8 is refused with the line and key, never replaced by U+FFFD
		"[[profiles]]\nname = \"x\"\nruntime = \"codex\"\nmodels = [\"gpt\xff\"]": `line 4 (last key "profiles.models"): invalid UTF-8 byte: 0xff`,
		"log_level = \"info\xfe\"": `line 1 (last key "log_level"): invalid UTF-8 byte: 0xfe`,
	}
	for body, want := range cases {
		c, err := loadConfig(writeConfig(t, body), true, envOf(map[string]string{"HOME": "/h"}))
		if err == nil {
			err = c.validate()
		}
		require.ErrorContains(t, err, want, body)
	}
}

// An unknown key does not hide the file's other problems: one run names them all
// (docs/configuration.md, "every problem at once").
func TestConfig_UnknownKeyReportedWithEveryOtherProblem(t *testing.T) {
	t.Parallel()
	body := "[scheduler]\nticks = \"1s\"\nlease_ttl = \"10s\"\nrenew_interval = \"20s\"\nmax_concurrency = -1\n"
	c, err := loadConfig(writeConfig(t, body), true, envOf(map[string]string{"HOME": "/h"}))
	require.NoError(t, err, "a readable file loads; its problems are validate's to report")
	err = c.validate()
	for _, want := range []string{"unknown key scheduler.ticks", "scheduler.renew_interval", "scheduler.max_concurrency"} {
		require.ErrorContains(t, err, want)
	}
}

// A misspelled key gets the key of its own table it most likely meant, in tables, arrays of
// tables and at the top; a key far from every key, or under a table that is itself unknown,
// gets none (the unknown table gets its own).
func TestConfig_UnknownKeyDidYouMean(t *testing.T) {
	t.Parallel()
	cases := map[string][]string{
		"[scheduler]\nticks = \"1s\"":                                        {"unknown key scheduler.ticks: did you mean scheduler.tick?"},
		"[scheduler]\nlease_tll = \"10s\"":                                   {"unknown key scheduler.lease_tll: did you mean scheduler.lease_ttl?"},
		"[[profiles]]\nname = \"x\"\nruntime = \"ndjson\"\ncomand = [\"a\"]": {"unknown key profiles.comand: did you mean profiles.command?"},
		"[[repositories]]\npath = \"/a\"\non_conflikt = \"block\"":           {"unknown key repositories.on_conflikt: did you mean repositories.on_conflict?"},
		"[retention]\nmax_days = 3\n":                                        {"unknown key retention.max_days: did you mean retention.max_age?"},
		"[[prices]]\nmodel = \"m\"\ncache_reads = 1.0":                       {"unknown key prices.cache_reads: did you mean prices.cache_read?"},
		"datadir = \"/x\"":                                                   {"unknown key datadir: did you mean data_dir?"},
		"[schedular]\ntick = \"1s\"":                                         {"unknown key schedular: did you mean scheduler?", "unknown key schedular.tick (docs/configuration.md lists the keys)"},
		`colour = "red"`:                                                     {"unknown key colour (docs/configuration.md lists the keys)"},
	}
	for body, wants := range cases {
		c, err := loadConfig(writeConfig(t, body), true, envOf(map[string]string{"HOME": "/h"}))
		require.NoError(t, err, body)
		err = c.validate()
		for _, want := range wants {
			require.ErrorContains(t, err, want, body)
		}
	}
}

func TestConfig_TokenSources(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tok := filepath.Join(dir, "tok")
	require.NoError(t, os.WriteFile(tok, []byte(" from-file \n"), 0o600))
	a := &app{env: envOf(nil), cfg: Config{HTTP: HTTPConfig{TokenFile: tok}}}
	admits := func(flag, presented string) bool {
		t.Helper()
		ts, err := a.tokens(flag)
		require.NoError(t, err)
		name, err := ts.Authenticate(presented)
		if err == nil {
			require.Equal(t, tools.DefaultTokenName, name, "one token, from any source, is named default")
		}
		return err == nil
	}
	require.True(t, admits("", "from-file"), "the one-token file works as before, trimmed")
	a.env = envOf(map[string]string{EnvToken: "from-env"})
	require.True(t, admits("", "from-env"), "the environment beats the file")
	require.False(t, admits("", "from-file"))
	require.True(t, admits("from-flag", "from-flag"), "the flag beats both")
	require.False(t, admits("from-flag", "from-env"))
	a.env = envOf(nil)
	require.NoError(t, os.Chmod(tok, 0o640))
	_, err := a.tokens("")
	require.ErrorContains(t, err, "chmod 600")
	require.ErrorContains(t, err, "http.token_file")
	require.NoError(t, os.WriteFile(tok, nil, 0o600))
	require.NoError(t, os.Chmod(tok, 0o600))
	_, err = a.tokens("")
	require.ErrorContains(t, err, "empty")
	none, err := (&app{env: envOf(nil)}).tokens("")
	require.NoError(t, err)
	require.Nil(t, none, "no token configured: nil, the listener stays loopback only")
}

func TestRedactor_HidesProfileSecrets(t *testing.T) {
	t.Parallel()
	a := &app{env: envOf(map[string]string{"ANTHROPIC_API_KEY": "sk-ant-secret-1234", "SHORT": "abc", "OPENAI_API_KEY": "sk-secret"}),
		cfg: Config{Profiles: []agent.Profile{{Name: "c", Runtime: agent.RuntimeClaudeCode, SecretEnv: []string{"ANTHROPIC_API_KEY", "SHORT"}},
			{Name: "x", Runtime: agent.RuntimeCodex, SecretEnv: []string{"OPENAI_API_KEY", "UNSET"}}}}}
	r := a.redactor()
	require.NotNil(t, r)
	require.Equal(t, "key="+agent.Redacted+" other="+agent.Redacted+" abc stays", r("key=sk-ant-secret-1234 other=sk-secret abc stays"))
	require.Nil(t, (&app{env: envOf(nil)}).redactor(), "no secrets, no redaction")
}

// TestConfig_DocExample: the example in docs/configuration.md loads and validates.
func TestConfig_DocExample(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "docs", "configuration.md"))
	require.NoError(t, err)
	_, rest, ok := strings.Cut(string(doc), "```toml\n")
	require.True(t, ok)
	example, _, ok := strings.Cut(rest, "```")
	require.True(t, ok)
	c, err := loadConfig(writeConfig(t, example), true, envOf(map[string]string{"HOME": "/h"}))
	require.NoError(t, err)
	require.NoError(t, c.validate())
	require.Equal(t, "claude", c.Profiles[0].Name)
	require.Equal(t, 2, *c.Scheduler.RetryBudget)
}

// TestLogFiles_AreTheRunners: get_mission_log reads the files the runner writes.
func TestLogFiles_AreTheRunners(t *testing.T) {
	t.Parallel()
	require.Equal(t, runner.FileStdout, tools.LogStdout)
	require.Equal(t, runner.FileStderr, tools.LogStderr)
	require.Equal(t, runner.FileExit, tools.LogExit)
}

// TestConfig_ReadmeExample: the configuration example of the README loads and validates, and
// its profiles launch the runtimes it says.
func TestConfig_ReadmeExample(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "README.md"))
	require.NoError(t, err)
	// every TOML block of the README loads and validates; the full example is the one with checks
	var c *Config
	rest, blocks := string(doc), 0
	for {
		var ok bool
		if _, rest, ok = strings.Cut(rest, "```toml\n"); !ok {
			break
		}
		var example string
		example, rest, ok = strings.Cut(rest, "```")
		require.True(t, ok)
		blocks++
		got, err := loadConfig(writeConfig(t, example), true, envOf(map[string]string{"HOME": "/h"}))
		require.NoError(t, err, example)
		require.NoError(t, got.validate(), example)
		if strings.Contains(example, "checks") {
			c = &got
		}
	}
	require.GreaterOrEqual(t, blocks, 2)
	require.NotNil(t, c, "the README's full example")
	require.Len(t, c.Profiles, 2)
	require.Equal(t, agent.RuntimeClaudeCode, c.Profiles[0].Runtime)
	require.Equal(t, agent.RuntimeCodex, c.Profiles[1].Runtime)
	require.Equal(t, [][]string{{"go", "build", "./..."}, {"go", "test", "./..."}}, c.Repositories[0].Checks)
}

package adapters

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
)

// DefaultClaudePermissionMode is the --permission-mode of a claude-code profile that sets
// none: Write and Edit inside the working directory are allowed, Bash and MCP tools only
// through allowed_tools (agent-clis.md §2).
const DefaultClaudePermissionMode = "acceptEdits"

// claudeQuietEnv keeps Claude Code from calling anything but the model endpoint (no
// telemetry, update checks or "hello" probes; agent-clis.md §2, "Network behaviour"). A
// profile's set_env may override each.
var claudeQuietEnv = map[string]string{
	"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
	"DISABLE_TELEMETRY":                        "1",
	"DISABLE_AUTOUPDATER":                      "1",
}

// claudeParentEnv are variables a parent Claude Code sets for its own children; a nested
// claude must not see them, whatever the allow-list says.
var claudeParentEnv = []string{"CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT"}

// ClaudeCode is the adapter of runtime claude-code (Claude Code 2.1.332, agent-clis.md §2).
// Build it with NewClaudeCode.
type ClaudeCode struct {
	euid func() int // the effective user id, injectable for tests
}

// NewClaudeCode returns the claude-code adapter for the current process's user.
func NewClaudeCode() ClaudeCode { return ClaudeCode{euid: os.Geteuid} }

// BriefPointer is the short prompt the CLI adapters pass on the command line: the brief
// itself stays in the file (so no brief meets the argv size limit or shows in ps).
func BriefPointer(briefFile string) string {
	return "Your task is described in the file " + briefFile +
		". Read that file and do what it asks, working in the current directory. " +
		"When you are done, reply with a short summary of what you did."
}

// Invocation builds:
//
//	<command…> -p <pointer> --output-format stream-json --verbose --permission-mode <mode>
//	  [--model=<model>] [extra_args…] [--mcp-config <file> --strict-mcp-config]
//	  [--allowedTools <a,b,…>]
//
// -p and its prompt come first and the variadic flags (--mcp-config, --allowedTools) last,
// because a variadic flag swallows the positional arguments after it. The environment is
// the base environment plus CLAUDE_CODE_MAX_RETRIES (max_retries), the quiet variables,
// IS_SANDBOX=1 when bypassPermissions runs as root (Claude Code refuses it otherwise), and a
// private HOME under the state directory unless one is passed; CLAUDECODE and
// CLAUDE_CODE_ENTRYPOINT are removed.
func (c ClaudeCode) Invocation(p agent.Profile, req agent.LaunchRequest) (agent.Invocation, error) {
	if req.BriefFile == "" {
		return agent.Invocation{}, badProfile(p, "claude-code needs the brief file of the attempt")
	}
	if err := checkModel(p, req); err != nil {
		return agent.Invocation{}, err
	}
	ph := newPlaceholders(p, req)
	command := p.Command
	if len(command) == 0 {
		command = []string{"claude"}
	}
	argv, err := ph.expandAll(p, "command element", command)
	if err != nil {
		return agent.Invocation{}, err
	}
	mode := p.PermissionMode
	if mode == "" {
		mode = DefaultClaudePermissionMode
	}
	argv = append(argv, "-p", BriefPointer(req.BriefFile),
		"--output-format", "stream-json", "--verbose", "--permission-mode", mode)
	if m := effectiveModel(p, req); m != "" {
		argv = append(argv, "--model="+m) // one element: never split, never read as an option
	}
	extra, err := ph.expandAll(p, "extra_args element", p.ExtraArgs)
	if err != nil {
		return agent.Invocation{}, err
	}
	argv = append(argv, extra...)
	if p.MCPConfig != "" {
		cfg, err := ph.expand(p, "mcp_config", p.MCPConfig)
		if err != nil {
			return agent.Invocation{}, err
		}
		argv = append(argv, "--mcp-config", cfg, "--strict-mcp-config")
	}
	if len(p.AllowedTools) > 0 {
		argv = append(argv, "--allowedTools", strings.Join(p.AllowedTools, ","))
	}

	env, err := baseEnv(p, req, ph)
	if err != nil {
		return agent.Invocation{}, err
	}
	for _, k := range claudeParentEnv {
		delete(env, k)
	}
	for k, v := range claudeQuietEnv {
		setDefault(env, k, v)
	}
	if p.MaxRetries != nil {
		if *p.MaxRetries < 0 {
			return agent.Invocation{}, badProfile(p, "max_retries %d must not be negative", *p.MaxRetries)
		}
		env["CLAUDE_CODE_MAX_RETRIES"] = strconv.Itoa(*p.MaxRetries)
	}
	euid := c.euid
	if euid == nil {
		euid = os.Geteuid
	}
	if mode == "bypassPermissions" && euid() == 0 {
		setDefault(env, "IS_SANDBOX", "1")
	}
	privateHome(env, req)
	return agent.Invocation{Argv: argv, Env: env, Dir: req.Start.Workspace}, nil
}

// NewDecoder returns the per-attempt decoder of `--output-format stream-json` events.
func (ClaudeCode) NewDecoder() agent.Decoder { return newClaudeDecoder() }

// claudeTool returns a one-line description of a tool call for task.progress:
// "Write /w/hello.txt", "Bash: go test ./...".
func claudeTool(name string, in claudeToolInput) string {
	switch {
	case in.FilePath != "":
		return name + " " + in.FilePath
	case in.Command != "":
		return name + ": " + in.Command
	case in.Pattern != "":
		return name + " " + in.Pattern
	case in.URL != "":
		return name + " " + in.URL
	case in.Description != "":
		return name + ": " + in.Description
	}
	return name
}

// claudeFileTools write the file named by their file_path input.
var claudeFileTools = map[string]bool{"Write": true, "Edit": true, "MultiEdit": true, "NotebookEdit": true}

// claudeAPIStatus renders an HTTP status for a summary ("HTTP 401"), or "" when unknown.
func claudeAPIStatus(status *int, errType string) string {
	switch {
	case status != nil && errType != "":
		return fmt.Sprintf("HTTP %d %s", *status, errType)
	case status != nil:
		return fmt.Sprintf("HTTP %d", *status)
	}
	return errType
}

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/e2e/testenv"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// toolCount is the number of tools every client must see.
const toolCount = 29

// TestClientSnippets: every client configuration the README shows parses, names our
// command, and — started exactly as the client would start it — answers tools/list.
func TestClientSnippets(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "README.md"))
	require.NoError(t, err)
	files, err := filepath.Glob("testdata/clients/*")
	require.NoError(t, err)
	require.Len(t, files, 4)
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			raw, err := os.ReadFile(f)
			require.NoError(t, err)
			require.Contains(t, string(readme), strings.TrimSpace(string(raw)), "the README shows this snippet verbatim")
			var command string
			var args []string
			if strings.HasSuffix(f, ".txt") { // claude mcp add <name> -- <command> <args...>
				fields := strings.Fields(string(raw))
				require.Equal(t, []string{"claude", "mcp", "add", "mcp-scheduler", "--"}, fields[:5])
				command, args = fields[5], fields[6:]
			} else {
				var cfg map[string]map[string]struct {
					Type    string   `json:"type"`
					Command string   `json:"command"`
					Args    []string `json:"args"`
				}
				require.NoError(t, json.Unmarshal(raw, &cfg))
				servers := cfg["mcpServers"]
				if servers == nil {
					servers = cfg["servers"] // VS Code
				}
				srv, ok := servers["mcp-scheduler"]
				require.True(t, ok, "names the server mcp-scheduler")
				require.Contains(t, []string{"", "stdio"}, srv.Type)
				command, args = srv.Command, srv.Args
			}
			require.Equal(t, "mcp-scheduler", command, "the installed command")
			s := newSandbox(t)
			for i, a := range args {
				args[i] = strings.NewReplacer("${workspaceFolder}", s.repo, "/path/to/your/project", s.repo).Replace(a)
			}
			// The client starts the server in some directory of its own; the snippet must
			// not depend on it (except Claude Code's, which runs in the project).
			dir := s.home
			if strings.HasSuffix(f, ".txt") {
				dir = s.repo
			}
			names := listToolsOverStdio(t, s, dir, args)
			require.Len(t, names, toolCount)
		})
	}
}

// listToolsOverStdio starts the binary with args in dir like an MCP client and lists tools.
func listToolsOverStdio(t *testing.T, s *sandbox, dir string, args []string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	tr := transport.NewStdioWithOptions(binary, s.env, args, transport.WithCommandFunc(
		func(ctx context.Context, command string, env []string, args []string) (*exec.Cmd, error) {
			cmd := exec.CommandContext(ctx, command, args...)
			cmd.Env, cmd.Dir = env, dir
			return cmd, nil
		}))
	c := client.NewClient(tr)
	require.NoError(t, c.Start(ctx))
	defer c.Close()
	var ir mcp.InitializeRequest
	ir.Params.ClientInfo = mcp.Implementation{Name: "snippet-test", Version: "0"}
	_, err := c.Initialize(ctx, ir)
	require.NoError(t, err)
	res, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	require.NoError(t, err)
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	// The default repository is the snippet's --repo (or the project directory).
	var req mcp.CallToolRequest
	req.Params.Name, req.Params.Arguments = "create_mission", map[string]any{"title": "snippet"}
	r, err := c.CallTool(ctx, req)
	require.NoError(t, err)
	require.False(t, r.IsError, "%v", r.Content)
	raw, _ := json.Marshal(r.StructuredContent)
	require.Contains(t, string(raw), `"repository":"`+s.repo+`"`)
	return names
}

// sdkResult is what testdata/sdk-client.cjs prints.
type sdkResult struct {
	Tools      []string                   `json:"tools"`
	Created    sdkCall                    `json:"created"`
	Dispatched sdkCall                    `json:"dispatched"`
	Status     sdkCall                    `json:"status"`
	Claim      sdkCall                    `json:"claim"`
	Heartbeat  *sdkCall                   `json:"heartbeat"`
	Complete   *sdkCall                   `json:"complete"`
	CallerErr  sdkCall                    `json:"callerError"`
	Resource   struct{ URI, Text string } `json:"resource"`
	Prompt     struct {
		Role    string                `json:"role"`
		Content struct{ Text string } `json:"content"`
	} `json:"prompt"`
}

type sdkCall struct {
	IsError       bool            `json:"isError"`
	Structured    json.RawMessage `json:"structured"`
	Text          string          `json:"text"`
	ProtocolError string          `json:"protocolError"`
}

func runSDK(t *testing.T, s *sandbox, mode string, env ...string) sdkResult {
	t.Helper()
	return runSDKScript[sdkResult](t, s, "testdata/sdk-client.cjs", mode, env...)
}

// runSDKScript runs one of the Node scripts that drive the built binary through the official
// TypeScript SDK (mode names the transport) and decodes what it printed as T.
func runSDKScript[T any](t *testing.T, s *sandbox, script, mode string, env ...string) T {
	t.Helper()
	nodeModules := testenv.NodeModules(t, "@modelcontextprotocol/sdk")
	node := testenv.LookPath(t, "node")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	abs, err := filepath.Abs(script)
	require.NoError(t, err)
	cmd := exec.CommandContext(ctx, node, abs, mode)
	cmd.Env = append(append(append([]string{}, s.env...), "NODE_PATH="+nodeModules, "MCP_BIN="+binary, "MCP_REPO="+s.repo), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	require.NoError(t, cmd.Run(), "%s: %s", script, errb.String())
	var r T
	require.NoError(t, json.Unmarshal(out.Bytes(), &r), out.String())
	return r
}

// checkSDK checks what the official SDK client saw, whatever the transport.
func checkSDK(t *testing.T, r sdkResult) {
	t.Helper()
	require.Len(t, r.Tools, toolCount)
	require.False(t, r.Created.IsError, r.Created.Text)
	var created struct{ Mission domain.Mission }
	require.NoError(t, json.Unmarshal(r.Created.Structured, &created))
	require.Equal(t, domain.StatePending, created.Mission.State)
	require.Equal(t, 5, created.Mission.Priority)
	require.JSONEq(t, string(r.Created.Structured), r.Created.Text, "the text is the structured result")
	var d struct{ IDs map[string]string }
	require.NoError(t, json.Unmarshal(r.Dispatched.Structured, &d))
	require.Len(t, d.IDs, 2)
	var st struct {
		Total  int
		Counts map[string]int
	}
	require.NoError(t, json.Unmarshal(r.Status.Structured, &st))
	require.Equal(t, 3, st.Total)
	// Pull mode: the claim acquires and starts a mission with its workspace made, and the
	// heartbeat fenced by its epoch is answered.
	require.Empty(t, r.Claim.ProtocolError)
	var claim struct {
		Claimed   bool
		Epoch     int64
		Workspace struct{ Path string }
	}
	require.NoError(t, json.Unmarshal(r.Claim.Structured, &claim), r.Claim.Text)
	require.True(t, claim.Claimed, r.Claim.Text)
	require.DirExists(t, claim.Workspace.Path)
	require.NotNil(t, r.Heartbeat)
	require.False(t, r.Heartbeat.IsError, r.Heartbeat.Text)
	require.True(t, r.CallerErr.IsError)
	require.Contains(t, r.CallerErr.Text, "mission_id")
	require.Equal(t, "scheduler://status", r.Resource.URI)
	require.Contains(t, r.Resource.Text, `"total":3`)
	require.Equal(t, "user", r.Prompt.Role)
	require.Contains(t, r.Prompt.Content.Text, "ship it")
}

// TestTypeScriptSDK_Stdio: the official TypeScript SDK client starts the server over stdio.
func TestTypeScriptSDK_Stdio(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	checkSDK(t, runSDK(t, s, "stdio"))
}

// TestTypeScriptSDK_StreamableHTTP: the official TypeScript SDK client over Streamable HTTP
// with a bearer token.
func TestTypeScriptSDK_StreamableHTTP(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	_, base := s.startHTTP([]string{EnvToken + "=sdk-token-789"})
	checkSDK(t, runSDK(t, s, "http", "MCP_URL="+base+"/mcp", "MCP_TOKEN=sdk-token-789"))
}

// inspector runs the MCP Inspector CLI (@modelcontextprotocol/inspector-cli 1.0.3, pinned
// in .ci/install-node-packages) and decodes its JSON answer. The CLI reads its own
// package.json through a path it checks against the working directory but imports relative
// to its module (build/index.js), so it runs in its build directory, where both agree.
func inspector(t *testing.T, s *sandbox, args ...string) map[string]any {
	t.Helper()
	out, errs, err := runInspector(t, s, args...)
	require.NoError(t, err, "inspector %v: %s\n%s", args, out, errs)
	var v map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &v), out)
	return v
}

// runInspector runs the Inspector CLI in --cli mode and returns its stdout and stderr.
func runInspector(t *testing.T, s *sandbox, args ...string) (string, string, error) {
	t.Helper()
	bin := testenv.NodeBin(t, "mcp-inspector-cli")
	dir := filepath.Join(testenv.NodeModules(t, "@modelcontextprotocol/inspector-cli"), "@modelcontextprotocol", "inspector-cli", "build")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append([]string{"--cli"}, args...)...)
	cmd.Dir = dir
	cmd.Env = s.env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	return out.String(), errb.String(), err
}

func inspectorTools(t *testing.T, v map[string]any) []string {
	t.Helper()
	var names []string
	for _, tl := range v["tools"].([]any) {
		names = append(names, tl.(map[string]any)["name"].(string))
	}
	return names
}

// TestInspectorCLI: the current MCP Inspector CLI lists and calls tools over stdio, and over
// Streamable HTTP and SSE against a server that requires a bearer token (sent with
// --header; without it the CLI is refused). Its --tool-arg values are strings, so the calls
// use string arguments.
func TestInspectorCLI(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	stdio := []string{"-e", EnvDataDir + "=" + s.dataDir, binary, "serve", "--repo", s.repo}
	require.Len(t, inspectorTools(t, inspector(t, s, append(stdio, "--method", "tools/list")...)), toolCount)
	created := inspector(t, s, append(stdio, "--method", "tools/call", "--tool-name", "create_mission", "--tool-arg", "title=from the inspector", "--tool-arg", "brief=check it")...)
	require.NotEqual(t, true, created["isError"])
	require.Contains(t, created["structuredContent"].(map[string]any)["mission"].(map[string]any)["title"], "from the inspector")
	bad := inspector(t, s, append(stdio, "--method", "tools/call", "--tool-name", "get_mission", "--tool-arg", "mission_id=nope")...)
	require.Equal(t, true, bad["isError"], "a caller error comes back as isError")

	const token = "inspector-token-5d2e"
	_, base := s.startHTTP([]string{EnvToken + "=" + token})
	auth := []string{"--header", "Authorization: Bearer " + token}
	for _, tr := range []struct{ url, transport string }{{base + "/mcp", "http"}, {base + "/sse", "sse"}} {
		over := append([]string{tr.url, "--transport", tr.transport}, auth...)
		require.Len(t, inspectorTools(t, inspector(t, s, append(over, "--method", "tools/list")...)), toolCount, tr.transport)
		st := inspector(t, s, append(over, "--method", "tools/call", "--tool-name", "status")...)
		require.EqualValues(t, 1, st["structuredContent"].(map[string]any)["total"], tr.transport)
		got := inspector(t, s, append(over, "--method", "tools/call", "--tool-name", "list_missions", "--tool-arg", "repository="+s.repo)...)
		require.Len(t, got["structuredContent"].(map[string]any)["missions"], 1, tr.transport)
		out, errs, err := runInspector(t, s, tr.url, "--transport", tr.transport, "--method", "tools/list")
		require.Error(t, err, "%s without the token: %s", tr.transport, out)
		require.Regexp(t, `unauthorized|401`, errs, "%s without the token is refused", tr.transport)
	}
	over := append([]string{base + "/mcp", "--transport", "http"}, auth...)
	res := inspector(t, s, append(over, "--method", "resources/read", "--uri", "scheduler://status")...)
	require.Len(t, res["contents"], 1)
	over = append([]string{base + "/sse", "--transport", "sse"}, auth...)
	pr := inspector(t, s, append(over, "--method", "prompts/get", "--prompt-name", "plan_voyage", "--prompt-args", "goal=ship it")...)
	require.Len(t, pr["messages"], 1)
}

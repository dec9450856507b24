package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
	"github.com/mcp-scheduler/mcp-scheduler/e2e/testenv"
	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/storage/teststore"
)

// bundle is one test's server: a real SQLite store in a temp dir, the engine, a real git
// repository as the default repository, the MCP server and an in-process client.
type bundle struct {
	t      testing.TB
	ctx    context.Context
	dir    string
	repo   string
	clock  *engine.FakeClock
	eng    *engine.Engine
	srv    *Server
	ws     *gitWorkspaces
	client *client.Client
	notes  *notes
}

type setupOpts struct {
	noWorkspaces bool
	extra        []Tool
	protocol     string // client protocol version ("" = the library's latest)
	noRun        bool   // do not start the notifier
	leaseTTL     time.Duration
	waitProgress time.Duration // Deps.WaitProgress (0: the default)
	// pull, when set, makes Deps.Pull from the test's engine and data dir instead of the
	// gitWorkspaces stand-in (a real scheduler's pull service: pullrate_test.go).
	pull func(t testing.TB, eng *engine.Engine, dir string) Pull
}

func setup(t testing.TB, o setupOpts) *bundle {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	dir := t.TempDir()
	st, err := teststore.Open(ctx, teststore.LocationIn(dir))
	require.NoError(t, err)
	repo := newRepo(t)
	clock := engine.NewFakeClock(time.Now())
	eng := engine.New(st, engine.Options{Clock: clock, DefaultRepository: repo, LeaseTTL: o.leaseTTL,
		ResolveRepository: func(p string) (string, error) {
			if p != repo {
				return "", fmt.Errorf("%q is not a configured repository", p)
			}
			return p, nil
		}})
	b := &bundle{t: t, ctx: ctx, dir: dir, repo: repo, clock: clock, eng: eng, notes: &notes{}}
	deps := Deps{Engine: eng, Logs: FileLogs{DataDir: dir}, WaitProgress: o.waitProgress}
	if !o.noWorkspaces {
		b.ws = &gitWorkspaces{root: filepath.Join(dir, "worktrees"), eng: eng}
		deps.Pull, deps.Workspaces = b.ws, b.ws
	}
	if o.pull != nil {
		deps.Pull = o.pull(t, eng, dir)
	}
	srv, err := New(deps, Options{Version: "test", ExtraTools: o.extra, ValidateOutput: true})
	require.NoError(t, err)
	b.srv = srv
	var wg sync.WaitGroup
	if !o.noRun {
		wg.Go(func() { _ = srv.Run(ctx) })
	}
	b.client = b.connect(o.protocol)
	t.Cleanup(func() {
		_ = b.client.Close()
		cancel()
		wg.Wait()
		require.NoError(t, st.Close())
	})
	return b
}

// connect starts an initialised in-process client that records notifications.
func (b *bundle) connect(protocol string) *client.Client {
	b.t.Helper()
	var opts []client.ClientOption
	if protocol != "" {
		opts = append(opts, client.WithProtocolVersion(protocol))
	}
	c, err := client.NewInProcessClientWithOptions(b.srv.MCP(), opts...)
	require.NoError(b.t, err)
	c.OnNotification(b.notes.add)
	require.NoError(b.t, c.Start(b.ctx))
	var ir mcp.InitializeRequest
	ir.Params.ClientInfo = mcp.Implementation{Name: "tools-test", Version: "0"}
	ir.Params.ProtocolVersion = protocol
	_, err = c.Initialize(b.ctx, ir)
	require.NoError(b.t, err)
	return c
}

// call invokes a tool and fails the test on a protocol error.
func (b *bundle) call(name string, args any) *mcp.CallToolResult {
	b.t.Helper()
	res, err := b.callErr(name, args)
	require.NoError(b.t, err, "tool %s", name)
	return res
}

func (b *bundle) callErr(name string, args any) (*mcp.CallToolResult, error) {
	var req mcp.CallToolRequest
	req.Params.Name = name
	req.Params.Arguments = toMap(b.t, args)
	return b.client.CallTool(b.ctx, req)
}

// ok calls a tool that must succeed and decodes its structured result into T, checking the
// text copy says the same.
func ok[T any](b *bundle, name string, args any) T {
	b.t.Helper()
	res := b.call(name, args)
	require.False(b.t, res.IsError, "tool %s failed: %s", name, text(res))
	return decode[T](b.t, res)
}

func decode[T any](t testing.TB, res *mcp.CallToolResult) T {
	t.Helper()
	var out T
	raw, err := json.Marshal(res.StructuredContent)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(raw, &out))
	require.JSONEq(t, string(raw), text(res), "the text content is the structured result as JSON")
	return out
}

// fails calls a tool that must answer with isError and returns the message.
func fails(b *bundle, name string, args any) string {
	b.t.Helper()
	res := b.call(name, args)
	require.True(b.t, res.IsError, "tool %s should have failed, got %s", name, text(res))
	require.Nil(b.t, res.StructuredContent)
	return text(res)
}

func text(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := mcp.AsTextContent(c); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func toMap(t testing.TB, v any) map[string]any {
	t.Helper()
	if v == nil {
		return map[string]any{}
	}
	if m, ok := v.(map[string]any); ok {
		return m
	}
	b, err := json.Marshal(v)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m))
	return m
}

// notes records notifications a client received.
type notes struct {
	mu   sync.Mutex
	list []mcp.JSONRPCNotification
}

func (n *notes) add(x mcp.JSONRPCNotification) {
	n.mu.Lock()
	n.list = append(n.list, x)
	n.mu.Unlock()
}

func (n *notes) byMethod(method string) []mcp.JSONRPCNotification {
	n.mu.Lock()
	defer n.mu.Unlock()
	var out []mcp.JSONRPCNotification
	for _, x := range n.list {
		if x.Method == method {
			out = append(out, x)
		}
	}
	return out
}

// createMission creates a mission through the tool and returns it.
func (b *bundle) createMission(args map[string]any) domain.Mission {
	b.t.Helper()
	if args["title"] == nil {
		args["title"] = "a mission"
	}
	return ok[CreatedMission](b, "create_mission", args).Mission
}

// gitWorkspaces is a small, real implementation of Pull and Workspaces for tests: it claims
// through the engine's claim steps with a linked git worktree per attempt on branch
// test/<mission>/a<attempt>, refuses a completion whose workspace was deleted before its work
// was committed, and diffs with `git diff`. The production one is the scheduler's pull
// service (engine/scheduler/claim.go, tested there), built on worktree.Manager.
type gitWorkspaces struct {
	root     string
	eng      *engine.Engine
	mu       sync.Mutex
	failNext error
	prepared []string
}

func (g *gitWorkspaces) Claim(ctx context.Context, req engine.ClaimRequest) (engine.Claimed, error) {
	p, err := g.eng.BeginClaim(ctx, req)
	if err != nil {
		return engine.Claimed{}, err
	}
	m, err := p.Mission(ctx)
	if err != nil {
		return engine.Claimed{}, err
	}
	ws, err := g.prepare(ctx, &m)
	if err != nil {
		return engine.Claimed{}, p.Fail(ctx, err)
	}
	return p.HandOver(ctx, ws, nil)
}

func (g *gitWorkspaces) prepare(ctx context.Context, m *domain.Mission) (engine.Workspace, error) {
	g.mu.Lock()
	fail := g.failNext
	g.failNext = nil
	g.prepared = append(g.prepared, fmt.Sprintf("%s/a%d", m.ID, m.Attempt))
	g.mu.Unlock()
	if fail != nil {
		return engine.Workspace{}, fail
	}
	if !domain.ValidID(domain.PrefixMission, m.ID) {
		return engine.Workspace{}, errors.New("bad mission id")
	}
	path := filepath.Join(g.root, m.ID, fmt.Sprintf("a%d", m.Attempt))
	branch := fmt.Sprintf("test/%s/a%d", m.ID, m.Attempt)
	base, err := git(ctx, m.Repository, "rev-parse", "HEAD")
	if err != nil {
		return engine.Workspace{}, err
	}
	if _, err := git(ctx, m.Repository, "worktree", "add", "-b", branch, "--", path, base); err != nil {
		return engine.Workspace{}, err
	}
	return engine.Workspace{Path: path, Branch: branch, BaseCommit: base, Strategy: engine.WorkspaceWorktree}, nil
}

// Complete: refused when the workspace directory is gone and its branch holds no commits
// beyond the base.
func (g *gitWorkspaces) Complete(ctx context.Context, f domain.Fence, res domain.WorkerResult) (domain.Mission, error) {
	d, err := g.eng.GetMission(ctx, f.MissionID)
	if err == nil && d.Mission.Lease.Epoch == f.Epoch {
		ws, err := recordedWorkspace(ctx, g.eng, d.Mission)
		if err != nil {
			return domain.Mission{}, err
		}
		if ws.Path != "" && !workKept(ctx, d.Mission.Repository, ws) {
			return domain.Mission{}, &domain.WorkspaceLostError{MissionID: f.MissionID, Attempt: d.Mission.Attempt, Path: ws.Path}
		}
	}
	return g.eng.Complete(ctx, f, res)
}

// workKept: the workspace directory exists, or its branch holds commits beyond the base.
func workKept(ctx context.Context, repo string, ws engine.Workspace) bool {
	if _, err := os.Stat(ws.Path); err == nil {
		return true
	}
	out, err := git(ctx, repo, "rev-list", "--count", ws.BaseCommit+".."+ws.Branch)
	return err == nil && out != "0"
}

// Fail fails the attempt through the engine alone: the scheduler's pull service, which also
// records a rate-limit window, is tested in engine/scheduler (pullrate_test.go).
func (g *gitWorkspaces) Fail(ctx context.Context, f domain.Fence, req engine.FailRequest, _ *agent.RateLimit) (domain.Mission, error) {
	return g.eng.Fail(ctx, f, req)
}

func (g *gitWorkspaces) Diff(ctx context.Context, m domain.Mission) (Diff, error) {
	ws, err := recordedWorkspace(ctx, g.eng, m)
	if err != nil {
		return Diff{}, err
	}
	if ws.Path == "" {
		return Diff{}, ErrNoWorkspace
	}
	head, err := git(ctx, ws.Path, "rev-parse", "HEAD")
	if err != nil {
		return Diff{}, err
	}
	names, err := git(ctx, ws.Path, "diff", "--name-status", ws.BaseCommit, head)
	if err != nil {
		return Diff{}, err
	}
	patch, err := git(ctx, ws.Path, "diff", ws.BaseCommit, head)
	if err != nil {
		return Diff{}, err
	}
	d := Diff{Base: ws.BaseCommit, Head: head, Branch: ws.Branch, Patch: patch}
	for _, l := range strings.Split(names, "\n") {
		if st, path, ok := strings.Cut(l, "\t"); ok {
			d.Files = append(d.Files, DiffFile{Path: path, Action: map[string]string{"A": "added", "M": "modified", "D": "deleted"}[st]})
		}
	}
	status, err := git(ctx, ws.Path, "status", "--porcelain")
	d.Uncommitted = status != ""
	return d, err
}

func git(ctx context.Context, dir string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), testenv.GitEnv()...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out)), nil
}

// newRepo makes a git repository with one commit.
func newRepo(t testing.TB) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	ctx := context.Background()
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"commit", "-q", "--allow-empty", "-m", "start"}} {
		_, err := git(ctx, dir, args...)
		require.NoError(t, err)
	}
	return dir
}

// newStoreEngine returns an engine over a fresh store (for tests that need no client).
func newStoreEngine(t *testing.T) *engine.Engine {
	t.Helper()
	st := teststore.New(t)
	return engine.New(st, engine.Options{DefaultRepository: t.TempDir()})
}

// callWithProgress calls a tool with a progress token in _meta.
func (b *bundle) callWithProgress(name string, args any, token string) (*mcp.CallToolResult, error) {
	var req mcp.CallToolRequest
	req.Params.Name = name
	req.Params.Arguments = toMap(b.t, args)
	req.Params.Meta = &mcp.Meta{ProgressToken: token}
	return b.client.CallTool(b.ctx, req)
}

// progressFor returns the progress values received for one token, in arrival order.
func (b *bundle) progressFor(token string) []float64 {
	var out []float64
	for _, n := range b.notes.byMethod("notifications/progress") {
		if n.Params.AdditionalFields["progressToken"] == token {
			if v, ok := n.Params.AdditionalFields["progress"].(float64); ok {
				out = append(out, v)
			}
		}
	}
	return out
}

// waitClaimsWaiting waits until n claims wait for work in the engine (subscribed to its
// change hub, so that work arriving now wakes them rather than being found by their first
// look).
func waitClaimsWaiting(t *testing.T, n int) {
	t.Helper()
	testenv.WaitFor(t, fmt.Sprintf("%d claims waiting for work", n), func() bool {
		return testenv.GoroutinesIn("engine.(*Engine).acquireWaiting(", "engine.(*Subscription).Wait(") >= n
	})
}

package tools

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/mark3labs/mcp-go/server"
)

// Name is the server's name in the MCP handshake.
const Name = "mcp-scheduler"

// instructions tell a client's model what the server is for and how to start.
const instructions = `mcp-scheduler schedules work for coding agents. Hand it missions (create_mission) or a whole plan with dependencies (dispatch; the plan_voyage prompt helps write one); it runs each attempt in its own git worktree, retries failures within a budget, lands results on the target branch and escalates what needs a decision.
Follow work with status, voyage_status, get_mission (why_not_running explains waiting missions), get_mission_log and get_mission_diff; decide blockers with list_escalations and resolve_escalation.
An agent can also work for the scheduler in pull mode: claim_mission, then heartbeat, report_progress, and complete_mission or fail_mission, always with mission_id and epoch.`

// Options tune a Server beyond its dependencies.
type Options struct {
	// Version is reported in the handshake.
	Version string
	// ExtraTools are registered after the standard ones (tests and benchmarks); each must
	// pass Tool.Validate.
	ExtraTools []Tool
	// ValidateOutput checks every structured result against its tool's output schema (a
	// test aid: it costs a schema validation per call).
	ValidateOutput bool
}

// Server is the MCP surface of the scheduler: the tools, resources and prompts on one
// mcp-go server, plus the notifier that turns engine changes into resource notifications.
type Server struct {
	mcp   *server.MCPServer
	deps  *Deps
	tools []Tool
	subs  *subscriptions
	life  *sessionLife
	log   *slog.Logger
	// sessions is the session table of the running ServeHTTP (nil before; tests read it).
	sessions *sessionTable
	// tasks are the MCP tasks of every transport (tasks.go); offer says which sessions
	// may create them (taskrpc.go).
	tasks *taskTable
	offer *taskOffer
	// templates are the resource templates as registered with mcp-go, for preflight.go.
	templates []resourceTemplate
}

// New builds the MCP server over d. It registers nothing global: several Servers can live in
// one process (tests). Call Run to deliver change notifications.
func New(d Deps, opt Options) (*Server, error) {
	if d.Engine == nil {
		return nil, errors.New("tools: Deps.Engine is required")
	}
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	version := opt.Version
	if version == "" {
		version = "dev"
	}
	d.status = &statusCache{}
	s := &Server{deps: &d, log: d.Logger, subs: newSubscriptions(), life: newSessionLife(),
		tasks: newTaskTable(d.Logger), offer: newTaskOffer()}
	s.tools = append(AllTools(s.deps), opt.ExtraTools...)
	seen := map[string]bool{}
	for _, t := range s.tools {
		if err := t.Validate(); err != nil {
			return nil, fmt.Errorf("tools: %w", err)
		}
		if seen[t.Tool.Name] {
			return nil, fmt.Errorf("tools: tool %s registered twice", t.Tool.Name)
		}
		seen[t.Tool.Name] = true
	}
	hooks := &server.Hooks{}
	s.subs.install(hooks)
	s.life.install(hooks)
	newArgMessages(s.tools).install(hooks)
	installUTF8Check(hooks, d.Logger)
	installVersionDefault(hooks)
	s.offer.install(hooks, s)
	installStdioVersion(hooks) // transport_stdio.go, for preflight.go
	opts := []server.ServerOption{
		server.WithToolCapabilities(false),
		server.WithResourceCapabilities(true, false),
		server.WithPromptCapabilities(false),
		server.WithLogging(),
		server.WithTaskCapabilities(true, true, true), // answered by taskrpc.go, not mcp-go
		server.WithRecovery(),
		server.WithInputSchemaValidation(),
		server.WithInstructions(instructions),
		server.WithLogger(requestLogger(d.Logger)),
		server.WithHooks(hooks),
	}
	if opt.ValidateOutput {
		opts = append(opts, server.WithOutputSchemaValidation())
	}
	s.mcp = server.NewMCPServer(Name, version, opts...)
	for _, t := range s.tools {
		s.mcp.AddTool(t.Tool, t.Handler)
	}
	s.addResources()
	s.addPrompts()
	return s, nil
}

// MCP returns the underlying mcp-go server (for transports and in-process clients).
func (s *Server) MCP() *server.MCPServer { return s.mcp }

// Tools returns the registered tools in tools/list order.
func (s *Server) Tools() []Tool { return s.tools }

// Run delivers resource change notifications (resources/subscribe and subscriptions/listen)
// from the engine's change hub until ctx ends. It returns nil on cancellation.
// While it runs, the status tool and resource are served from a cache kept current by the
// same hub (statuscache.go).
func (s *Server) Run(ctx context.Context) error {
	detach := s.deps.status.attach(s.deps.Engine.Hub())
	defer detach()
	return s.subs.run(ctx, s.deps.Engine.Hub(), s.mcp, s.log)
}

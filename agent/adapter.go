package agent

// Adapter is how one runtime (ndjson, claude-code, codex, command) is launched and how its
// output is understood. Implementations live in agent/adapters; the runner (agent/runner)
// takes an Adapter and knows nothing of any one CLI.
type Adapter interface {
	// Invocation builds the command line, environment and files for one attempt. It never
	// uses a shell; argv elements come from the profile (configuration) and the request.
	Invocation(p Profile, req LaunchRequest) (Invocation, error)
	// NewDecoder returns fresh per-attempt state for translating the agent's stdout.
	NewDecoder() Decoder
}

// Decoder translates one attempt's stdout into protocol messages. It is used from one
// goroutine at a time.
type Decoder interface {
	// Line translates one stdout line (newline, trailing CR and a leading BOM already
	// removed; never blank) into zero or more messages. An error means the line was not
	// understood; it is logged and counted, never fatal, and decoding goes on.
	Line(line []byte) ([]Message, error)
	// End is called once, after the process ended and its output was read to the end. It
	// returns the attempt's final result: the one the agent reported, or one derived from the
	// exit status when the stream had none (a run that never reported is a failure, whatever
	// its exit code).
	End(exit ExitStatus) WorkerResult
}

// ExitStatus is how an agent process ended. Known is false when nobody could observe it (the
// process vanished while no scheduler watched and no shim recorded it).
type ExitStatus struct {
	Known  bool   `json:"known"`
	Code   int    `json:"code"`             // exit code when the process exited; -1 when signalled
	Signal string `json:"signal,omitempty"` // "SIGTERM", "SIGKILL", ... when signalled
	// Reason says why the scheduler stopped it, when it did: "cancelled", "hard_timeout",
	// "lease_lost", "stalled".
	Reason string `json:"reason,omitempty"`
}

// LaunchRequest is what the scheduler knows about one attempt when it launches it.
type LaunchRequest struct {
	// Start is the agent.start message (mission, brief, workspace, epoch, checkpoint).
	Start Start
	// BriefFile is the absolute path of the rendered brief inside the workspace
	// (<workspace>/.mcp-scheduler/brief.md); CLI adapters point the prompt at it.
	BriefFile string
	// Self is the absolute path of the mcp-scheduler binary (the {mcp_scheduler} placeholder).
	Self string
	// StateDir is a private directory for this profile's runtime state (for example the
	// default CODEX_HOME); it exists and is owned by the user.
	StateDir string
	// Env is the environment already built from the profile's allow-list and the mission's
	// variables; adapters add what their runtime needs and return the result.
	Env map[string]string
}

// Invocation is how to start one attempt's process.
type Invocation struct {
	Argv []string          // argv[0] is the program (resolved through PATH of Env when relative)
	Env  map[string]string // the complete environment of the child
	Dir  string            // working directory (the workspace)
	// ProtocolStdin: true for runtime ndjson, whose stdin carries agent.start, agent.ping and
	// agent.cancel; false means stdin is /dev/null (the CLIs wait for EOF on an open pipe).
	ProtocolStdin bool
	// Files are written (0600, parents 0700) before the process starts: absolute path → body.
	Files map[string][]byte
}

// Package runner launches managed agents and supervises them (design brief §5, §7): every
// agent is started through a shim (ShimMain, a hidden subcommand of our binary) in process
// groups of its own, writes its stdout and stderr to files in a per-attempt directory that the
// runner follows, and has its exit status recorded by the shim, so a restarted scheduler can
// re-attach to an agent that still runs (Attach) or learn how one ended while nobody watched.
//
// Process layout: the runner starts the shim in a new process group; the shim starts the
// agent in another new group, whose id is the agent's PID (pid.json). Stopping an agent
// signals the agent's group: SIGTERM, the grace period, SIGKILL. The shim lives in a group of
// its own so that it survives those signals and records how the agent ended; once the agent
// exited it also ends whatever is left of the agent's group, so no grandchild outlives its
// mission (bugs.md B27).
//
// The package is for Linux and macOS.
package runner

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
	"time"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
)

// Defaults of Config.
const (
	DefaultStderrTail   = 64 << 10
	DefaultOutputTail   = 4 << 10
	DefaultPollInterval = 250 * time.Millisecond
	DefaultLiveness     = time.Second
	DefaultStartTimeout = 30 * time.Second
	// killWait bounds how long Stop waits for the group to vanish after SIGKILL.
	killWait = 10 * time.Second
)

// Config configures a Runner.
type Config struct {
	// Self is the absolute path of our own binary: the shim is run as
	// `Self agent-shim ...`, and LaunchRequest.Self defaults to it ({mcp_scheduler}).
	Self string
	// DataDir is the data directory: attempt directories (AttemptDir) and the profiles'
	// private state directories live under it.
	DataDir string
	// Logger receives the runner's diagnostics (default: discard).
	Logger *slog.Logger
	// Now is the clock for event times and start times (default time.Now).
	Now func() time.Time
	// Environ is the server's environment that BuildEnv picks allowed variables from
	// (default os.Environ).
	Environ func() []string
	// MaxLine caps one stdout line in bytes (default agent.DefaultMaxLine, 16 MiB).
	MaxLine int
	// StderrTail is how many bytes of the end of stderr an Outcome keeps (default 64 KiB).
	StderrTail int
	// OutputTail is how many bytes of the end of stdout an Outcome keeps (default 4 KiB).
	OutputTail int
	// PollInterval is how often followed files are re-read when no file notification
	// arrived (default 250 ms; notifications make following immediate).
	PollInterval time.Duration
	// LivenessInterval is how often an attached agent's process is checked (default 1 s).
	LivenessInterval time.Duration
	// StartTimeout bounds how long the shim may take to report the agent started
	// (default 30 s).
	StartTimeout time.Duration
	// NoWarmShim turns off keeping one shim started ahead of time. A warm shim takes its
	// process start off the path from Launch to the agent's first event (docs/benchmarks.md).
	NoWarmShim bool
}

// Runner launches and re-attaches managed agents. It is safe for concurrent use.
type Runner struct {
	cfg   Config
	log   *slog.Logger
	watch *dirWatcher

	spare     chan *shimProc // at most one warm shim
	mu        sync.Mutex
	closed    bool
	refilling bool
	wg        sync.WaitGroup
}

// ErrConfig is matched by errors about a Runner's configuration.
var ErrConfig = errors.New("runner configuration")

// New returns a Runner. Close it when done.
func New(cfg Config) (*Runner, error) {
	if cfg.Self == "" || !filepath.IsAbs(cfg.Self) {
		return nil, fmt.Errorf("%w: Self must be the absolute path of our binary, got %q", ErrConfig, cfg.Self)
	}
	if cfg.DataDir == "" {
		return nil, fmt.Errorf("%w: DataDir is required", ErrConfig)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Environ == nil {
		cfg.Environ = os.Environ
	}
	if cfg.MaxLine <= 0 {
		cfg.MaxLine = agent.DefaultMaxLine
	}
	if cfg.StderrTail <= 0 {
		cfg.StderrTail = DefaultStderrTail
	}
	if cfg.OutputTail <= 0 {
		cfg.OutputTail = DefaultOutputTail
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = DefaultPollInterval
	}
	if cfg.LivenessInterval <= 0 {
		cfg.LivenessInterval = DefaultLiveness
	}
	if cfg.StartTimeout <= 0 {
		cfg.StartTimeout = DefaultStartTimeout
	}
	log := cfg.Logger.With("component", "runner")
	r := &Runner{cfg: cfg, log: log, watch: newDirWatcher(log), spare: make(chan *shimProc, 1)}
	r.refill()
	return r, nil
}

// Close ends the warm shim and releases the file watcher. Processes still followed fall back
// to polling; close the Runner after its processes ended or were detached.
func (r *Runner) Close() error {
	r.drainSpare()
	return r.watch.close()
}

var missionIDPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// AttemptDir returns the directory for one attempt, <DataDir>/attempts/<mission>/a<attempt>,
// refusing mission ids that are not [A-Za-z0-9_-]{1,64} (they become a path: bugs.md B31).
func (r *Runner) AttemptDir(missionID string, attempt int) (string, error) {
	if !missionIDPattern.MatchString(missionID) {
		return "", fmt.Errorf("attempt directory: mission id %q is not [A-Za-z0-9_-]{1,64}", missionID)
	}
	if attempt < 1 {
		return "", fmt.Errorf("attempt directory: attempt %d must be at least 1", attempt)
	}
	return filepath.Join(r.cfg.DataDir, "attempts", missionID, "a"+strconv.Itoa(attempt)), nil
}

// Spec is one attempt to launch or re-attach.
type Spec struct {
	Adapter agent.Adapter
	Profile agent.Profile
	// Request describes the attempt. When Request.Env is nil the runner builds it with
	// agent.BuildEnv from the profile, the server's environment and Vars. Self and StateDir
	// default to Config.Self and <DataDir>/profiles/<profile>.
	Request agent.LaunchRequest
	// AttemptDir holds the attempt's files (see the File constants); Launch creates it
	// (0700) and refuses one that already holds pid.json or exit.json.
	AttemptDir string
	// Vars are the mission's variables, used when Request.Env is nil.
	Vars map[string]string
	// Log receives the agent's stderr as it arrives, with secrets redacted (nil discards).
	// Writes happen on one goroutine; a failing writer is dropped.
	Log io.Writer
	// FromOffset (Attach only) is the stdout offset already processed: lines ending at or
	// before it are replayed to the adapter's decoder but not delivered again as events.
	FromOffset int64
}

// EventKind says what an Event reports.
type EventKind string

// Event kinds.
const (
	// EventMessage: the agent said something (Message).
	EventMessage EventKind = "message"
	// EventBadLine: a stdout line the adapter did not understand (Err); logged, counted,
	// never fatal.
	EventBadLine EventKind = "bad_line"
	// EventLineTooLong: a stdout line over the cap was cut (Err is an
	// *agent.LineTooLongError); reading went on after it.
	EventLineTooLong EventKind = "line_too_long"
	// EventSoftTimeout: the soft timeout passed; the agent was pinged (runtime ndjson).
	EventSoftTimeout EventKind = "soft_timeout"
	// EventStalled: the agent wrote nothing for the profile's stall threshold while its
	// process is alive (Idle says how long); it was pinged (runtime ndjson). It is stopped
	// when the silence reaches the stall timeout.
	EventStalled EventKind = "stalled"
)

// Event is one thing that happened in an attempt, in stdout order.
type Event struct {
	Kind    EventKind
	Message agent.Message // EventMessage only; secrets redacted
	Err     error         // EventBadLine, EventLineTooLong
	Time    time.Time     // when the runner read it
	// Size is the raw length in bytes of the stdout line it came from (for a cut line, its
	// full length); messages decoded from one line share it.
	Size int64
	// Offset is the stdout offset just past that line: Spec.FromOffset for a later Attach.
	Offset int64
	// Idle is how long the agent had written nothing (EventStalled only).
	Idle time.Duration
}

// FromAgent reports whether the event is output of the agent (every kind but
// EventSoftTimeout and EventStalled): proof of life that extends the lease.
func (e Event) FromAgent() bool { return e.Kind != EventSoftTimeout && e.Kind != EventStalled }

// Outcome is how an attempt ended.
type Outcome struct {
	// Result is the adapter decoder's final result (Decoder.End), or a failed result of
	// kind protocol when that result broke the protocol (ResultProblem says how).
	Result        agent.WorkerResult
	ResultProblem string
	// Exit is how the agent process ended; Exit.Reason is set when the runner stopped it
	// (see the Reason constants). Exit.Known is false when nobody observed the end.
	Exit agent.ExitStatus
	// StderrTail is the end of the agent's stderr (at most Config.StderrTail bytes),
	// secrets redacted: attach it to a failure (bugs.md B26).
	StderrTail string
	// OutputTail is the end of the agent's stdout (at most Config.OutputTail bytes of its
	// last lines, secrets redacted, a cut line shown by its start): its last words, attached
	// to a failure the scheduler caused (a timeout).
	OutputTail string
	Messages   int   // messages decoded
	BadLines   int   // lines the adapter did not understand
	CutLines   int   // lines over the cap
	Offset     int64 // stdout bytes read
	// Detached is true when the Process was detached: the agent may still run and nothing
	// above is final.
	Detached bool
}

// Reasons for stopping an agent (agent.ExitStatus.Reason).
const (
	ReasonCancelled   = "cancelled"
	ReasonHardTimeout = "hard_timeout"
	ReasonLeaseLost   = "lease_lost"
	ReasonStalled     = "stalled"
)

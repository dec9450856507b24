package runner

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// ShimSubcommand is the hidden subcommand of our binary that runs ShimMain:
// `mcp-scheduler agent-shim`.
const ShimSubcommand = "agent-shim"

// File descriptors between a runner and its shim: the runner writes one launch request
// (a JSON line) on controlFD; the shim answers on statusFD with one JSON line, a PIDRecord
// or {"error": "..."}.
const (
	controlFD = 3
	statusFD  = 4
)

// shimGiveUp is how long after SIGKILL the shim keeps waiting for the agent's group to
// vanish (a process in uninterruptible sleep) before it records the exit anyway.
const shimGiveUp = 10 * time.Second

// launchRequest is what a runner asks of a shim.
type launchRequest struct {
	Dir   string        `json:"dir"`   // the attempt directory
	Grace time.Duration `json:"grace"` // between SIGTERM and SIGKILL when cleaning up the group
	Argv  []string      `json:"argv"`  // argv[0] is resolved through Env's PATH
	Env   []string      `json:"env"`   // the agent's complete environment
	Cwd   string        `json:"cwd"`   // the agent's working directory
	Stdin bool          `json:"stdin"` // hand the shim's stdin (the protocol pipe) to the agent; else /dev/null
	// Redact are the secret values (the profile's secret_env) that must never reach the
	// attempt's files. With any, the agent writes into pipes and the shim relays its output
	// to FileStdout and FileStderr through an agent.RedactingWriter; without, the agent
	// appends to the files itself. They travel only on the control pipe, like Env.
	Redact []string `json:"redact,omitempty"`
}

// ShimMain is the agent shim, wired by the composition root as the hidden subcommand
// ShimSubcommand (args are what follows it; it takes none). A runner starts it in a process
// group of its own, possibly ahead of time, and sends it one launch request on fd 3. The shim
// then starts the agent in a new process group of the agent's own, with the requested
// environment, working directory and stdin, stdout and stderr appended to FileStdout and
// FileStderr in the attempt directory (relayed through the shim with the request's secrets
// redacted, when it names any); it writes FilePID, reports it on fd 4, and waits.
// When the agent has exited it ends what is left of the agent's group (SIGTERM, grace,
// SIGKILL), reaps every descendant it inherited (it is a child subreaper on Linux), writes
// FileExit and returns 0. EOF instead of a request (the runner went away) returns 0 at once.
//
// The shim outlives the scheduler that started it, so a restarted scheduler still learns how
// the agent ended. SIGTERM, SIGINT and SIGHUP sent to the shim are forwarded to the agent's
// group as SIGTERM.
func ShimMain(args []string) int {
	if len(args) > 0 {
		fmt.Fprintln(os.Stderr, "usage: agent-shim (started by mcp-scheduler with a launch request on fd 3)")
		return 2
	}
	control, status := pipeFD(controlFD, "control"), pipeFD(statusFD, "status")
	if control == nil || status == nil {
		fmt.Fprintln(os.Stderr, "agent-shim: fd 3 and fd 4 must be the pipes of a runner")
		return 2
	}
	line, _ := bufio.NewReader(control).ReadBytes('\n')
	control.Close()
	if len(line) == 0 {
		return 0 // the runner went away before using us
	}
	var req launchRequest
	if err := json.Unmarshal(line, &req); err != nil || req.Dir == "" || len(req.Argv) == 0 {
		sh := &shim{status: status}
		sh.sendStatus(shimStatus{Error: fmt.Sprintf("bad launch request (%v): %.200q", err, line)})
		return 2
	}
	sh := &shim{dir: req.Dir, grace: req.Grace, status: status}
	sh.logToFile()
	return sh.run(req)
}

// pipeFD returns fd when it is a pipe (so a runner passed it), nil otherwise: a shim started
// by hand must not use whatever else the descriptor is.
func pipeFD(fd int, name string) *os.File {
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFIFO {
		return nil
	}
	syscall.CloseOnExec(fd) // the agent must not inherit it
	return os.NewFile(uintptr(fd), name)
}

type shim struct {
	dir       string
	grace     time.Duration
	status    *os.File
	subreaper bool
	relays    []*relay // the output relays when the request names secrets
}

// logToFile points the shim's own stdout and stderr (diagnostics, a Go panic) at FileShimLog.
func (sh *shim) logToFile() {
	f, err := os.OpenFile(filepath.Join(sh.dir, FileShimLog), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return
	}
	defer f.Close()
	_ = dupTo(int(f.Fd()), 1)
	_ = dupTo(int(f.Fd()), 2)
}

func (sh *shim) run(req launchRequest) int {
	sh.subreaper = becomeSubreaper()
	// Catch (never ignore: an ignored signal stays ignored in the agent) the signals that
	// would end the shim, before the agent exists.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	defer signal.Stop(sigs)

	pid, rec, err := sh.start(req)
	if err != nil {
		sh.fail(err)
		return 127
	}
	sh.sendStatus(rec)

	stop := make(chan struct{})
	forwarded := make(chan struct{})
	go func() {
		defer close(forwarded)
		for {
			select {
			case <-sigs:
				_ = signalGroup(pid, syscall.SIGTERM)
			case <-stop:
				return
			}
		}
	}()
	ws := sh.waitAgent(pid)
	sh.cleanGroup(pid)
	close(stop)
	<-forwarded
	sh.drainRelays() // all output is in the files before exit.json says the agent ended

	exit := ExitRecord{Version: recordVersion, Code: ws.ExitStatus(), ExitedAt: time.Now().UTC()}
	if ws.Signaled() {
		exit.Code, exit.Signal = -1, signalName(ws.Signal())
	}
	if err := writeJSONAtomic(sh.dir, FileExit, exit, true); err != nil {
		fmt.Fprintf(os.Stderr, "agent-shim: %v\n", err)
		return 1
	}
	return 0
}

// lookPath resolves argv[0] through the PATH of the agent's environment.
func lookPath(argv0 string, env []string) (string, error) {
	path := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	if err := os.Setenv("PATH", path); err != nil { // the shim's own PATH serves nothing else
		return "", err
	}
	p, err := exec.LookPath(argv0)
	if err != nil {
		return "", err
	}
	return filepath.Abs(p)
}

// start starts the agent and writes pid.json.
func (sh *shim) start(req launchRequest) (int, PIDRecord, error) {
	var rec PIDRecord
	path, err := lookPath(req.Argv[0], req.Env)
	if err != nil {
		return 0, rec, fmt.Errorf("agent program %q: %w", req.Argv[0], err)
	}
	stdin := os.Stdin
	if !req.Stdin {
		if stdin, err = os.Open(os.DevNull); err != nil {
			return 0, rec, fmt.Errorf("agent stdin: %w", err)
		}
		defer stdin.Close()
	}
	out, errf, err := sh.outputs(req)
	if err != nil {
		return 0, rec, err
	}
	pid, err := syscall.ForkExec(path, req.Argv, &syscall.ProcAttr{
		Dir:   req.Cwd,
		Env:   req.Env,
		Files: []uintptr{stdin.Fd(), out.Fd(), errf.Fd()},
		Sys:   &syscall.SysProcAttr{Setpgid: true},
	})
	out.Close() // the agent holds its own copies now
	errf.Close()
	if err != nil {
		sh.drainRelays()
		return 0, rec, fmt.Errorf("start agent %s: %w", path, err)
	}
	// Only the agent holds the protocol pipe now: when the scheduler goes away it sees EOF.
	os.Stdin.Close()

	rec = PIDRecord{Version: recordVersion, ShimPID: os.Getpid(), AgentPID: pid, PGID: pid, StartedAt: time.Now().UTC(), Program: path}
	rec.ShimStart, _, _ = procStart(rec.ShimPID)
	rec.AgentStart, _, _ = procStart(pid) // the agent is at worst a zombie: we have not reaped it
	// No fsync: pid.json only matters while processes live, and a power loss ends them all.
	if err := writeJSONAtomic(sh.dir, FilePID, rec, false); err != nil {
		// Without pid.json nobody could find the agent after a restart: do not let it run.
		_ = signalGroup(pid, syscall.SIGKILL)
		sh.waitAgent(pid)
		sh.cleanGroup(pid)
		return 0, rec, err
	}
	return pid, rec, nil
}

// waitAgent reaps children until the agent itself has exited and returns its status. As a
// subreaper the shim also reaps orphaned descendants along the way.
func (sh *shim) waitAgent(pid int) syscall.WaitStatus {
	target := pid
	if sh.subreaper {
		target = -1
	}
	for {
		var ws syscall.WaitStatus
		wpid, err := syscall.Wait4(target, &ws, 0, nil)
		switch {
		case errors.Is(err, syscall.EINTR):
			continue
		case err != nil: // ECHILD: cannot happen while the agent is our child
			return ws
		case wpid == pid:
			return ws
		}
	}
}

// cleanGroup ends what is left of the agent's process group once the agent exited:
// SIGTERM, the grace period, SIGKILL; meanwhile it reaps whatever becomes its child.
func (sh *shim) cleanGroup(pgid int) {
	reap := func() {
		for {
			var ws syscall.WaitStatus
			wpid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
			if errors.Is(err, syscall.EINTR) {
				continue
			}
			if err != nil || wpid <= 0 {
				return
			}
		}
	}
	reap()
	if groupGone(pgid) {
		return
	}
	_ = signalGroup(pgid, syscall.SIGTERM)
	start := time.Now()
	killed := false
	for !groupGone(pgid) {
		if !killed && time.Since(start) >= sh.grace {
			_ = signalGroup(pgid, syscall.SIGKILL)
			killed = true
		}
		if time.Since(start) >= sh.grace+shimGiveUp {
			fmt.Fprintf(os.Stderr, "agent-shim: process group %d still exists %v after SIGKILL\n", pgid, shimGiveUp)
			return
		}
		time.Sleep(5 * time.Millisecond)
		reap()
	}
	reap()
}

// fail reports a start failure on the status descriptor and in exit.json (for a runner that
// restarted in between).
func (sh *shim) fail(err error) {
	fmt.Fprintf(os.Stderr, "agent-shim: %v\n", err)
	_ = writeJSONAtomic(sh.dir, FileExit, ExitRecord{Version: recordVersion, Code: 127, ExitedAt: time.Now().UTC(), Error: err.Error()}, true)
	sh.sendStatus(shimStatus{Error: err.Error(), NotFound: errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist)})
}

// shimStatus is the failure report on the status descriptor.
type shimStatus struct {
	Error string `json:"error"`
	// NotFound: the agent program does not exist (ErrProgramNotFound on the runner's side).
	NotFound bool `json:"not_found,omitempty"`
}

func (sh *shim) sendStatus(v any) {
	if sh.status == nil {
		return
	}
	b, _ := json.Marshal(v)
	_, _ = sh.status.Write(append(b, '\n'))
	_ = sh.status.Close()
	sh.status = nil
}

// readShimStatus reads the shim's one-line report from r.
func readShimStatus(r io.Reader) (PIDRecord, error) {
	b, err := bufio.NewReader(r).ReadBytes('\n')
	if len(b) == 0 && (err == nil || errors.Is(err, io.EOF)) {
		return PIDRecord{}, errors.New("the shim exited without reporting")
	}
	if err != nil && !errors.Is(err, io.EOF) {
		return PIDRecord{}, fmt.Errorf("read shim status: %w", err)
	}
	var st struct {
		PIDRecord
		shimStatus
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return PIDRecord{}, fmt.Errorf("shim status %q: %w", b, err)
	}
	switch {
	case st.NotFound:
		return PIDRecord{}, fmt.Errorf("%w: %s", ErrProgramNotFound, st.Error)
	case st.Error != "":
		return PIDRecord{}, errors.New(st.Error)
	}
	return st.PIDRecord, nil
}

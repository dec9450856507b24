package runner

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"
)

// ShimSubcommand is the hidden subcommand of our binary that runs ShimMain:
// `mcp-scheduler agent-shim --dir <attempt dir> --grace 1s -- <argv...>`.
const ShimSubcommand = "agent-shim"

// statusFD is the file descriptor on which the shim reports to the runner that launched it:
// one JSON object, a PIDRecord or {"error": "..."}, then EOF.
const statusFD = 3

// shimGiveUp is how long after SIGKILL the shim keeps waiting for the agent's group to
// vanish (a process in uninterruptible sleep) before it records the exit anyway.
const shimGiveUp = 10 * time.Second

// ShimMain is the agent shim, wired by the composition root as the hidden subcommand
// ShimSubcommand (args are what follows it). It runs in its own process group, which the
// runner created; it starts the agent (argv after "--", resolved through its own PATH, which
// is the agent's) in a new process group of the agent's own, with this process's environment,
// working directory and stdin, and stdout and stderr appended to FileStdout and FileStderr in
// --dir. It writes FilePID, reports it on fd 3, then waits. When the agent has exited it
// terminates what is left of the agent's group (SIGTERM, --grace, SIGKILL), reaps every
// descendant it inherited (it is a child subreaper on Linux), writes FileExit and returns 0.
//
// The shim outlives the scheduler that started it, so a restarted scheduler still learns how
// the agent ended. SIGTERM, SIGINT and SIGHUP sent to the shim are forwarded to the agent's
// group as SIGTERM.
func ShimMain(args []string) int {
	fs := flag.NewFlagSet(ShimSubcommand, flag.ContinueOnError)
	dir := fs.String("dir", "", "attempt directory (required)")
	grace := fs.Duration("grace", time.Second, "time between SIGTERM and SIGKILL when cleaning up the agent's group")
	fs.SetOutput(os.Stderr)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	argv := fs.Args()
	if *dir == "" || len(argv) == 0 {
		fmt.Fprintln(os.Stderr, "usage: agent-shim --dir DIR [--grace D] -- PROGRAM [ARGS...]")
		return 2
	}
	sh := &shim{dir: *dir, grace: *grace, status: statusFile()}
	return sh.run(argv)
}

type shim struct {
	dir       string
	grace     time.Duration
	status    *os.File
	subreaper bool
}

func (sh *shim) run(argv []string) int {
	sh.subreaper = becomeSubreaper()
	// Catch (never ignore: an ignored signal stays ignored in the agent) the signals that
	// would end the shim, before the agent exists.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	defer signal.Stop(sigs)

	pid, rec, err := sh.start(argv)
	if err != nil {
		sh.fail(err)
		return 127
	}
	sh.report(rec)

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

	exit := ExitRecord{Version: recordVersion, Code: ws.ExitStatus(), ExitedAt: time.Now().UTC()}
	if ws.Signaled() {
		exit.Code, exit.Signal = -1, signalName(ws.Signal())
	}
	if err := writeJSONAtomic(sh.dir, FileExit, exit); err != nil {
		fmt.Fprintf(os.Stderr, "agent-shim: %v\n", err)
		return 1
	}
	return 0
}

// start starts the agent and writes pid.json.
func (sh *shim) start(argv []string) (int, PIDRecord, error) {
	var rec PIDRecord
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return 0, rec, fmt.Errorf("agent program %q: %w", argv[0], err)
	}
	if !filepath.IsAbs(path) {
		if path, err = filepath.Abs(path); err != nil {
			return 0, rec, fmt.Errorf("agent program %q: %w", argv[0], err)
		}
	}
	flags := os.O_WRONLY | os.O_CREATE | os.O_APPEND
	out, err := os.OpenFile(filepath.Join(sh.dir, FileStdout), flags, 0o600)
	if err != nil {
		return 0, rec, fmt.Errorf("agent stdout: %w", err)
	}
	defer out.Close()
	errf, err := os.OpenFile(filepath.Join(sh.dir, FileStderr), flags, 0o600)
	if err != nil {
		return 0, rec, fmt.Errorf("agent stderr: %w", err)
	}
	defer errf.Close()

	pid, err := syscall.ForkExec(path, argv, &syscall.ProcAttr{
		Env:   os.Environ(),
		Files: []uintptr{os.Stdin.Fd(), out.Fd(), errf.Fd()},
		Sys:   &syscall.SysProcAttr{Setpgid: true},
	})
	if err != nil {
		return 0, rec, fmt.Errorf("start agent %s: %w", path, err)
	}
	// Only the agent holds the protocol pipe now: when the scheduler goes away it sees EOF.
	os.Stdin.Close()

	rec = PIDRecord{Version: recordVersion, ShimPID: os.Getpid(), AgentPID: pid, PGID: pid, StartedAt: time.Now().UTC(), Program: path}
	rec.ShimStart, _, _ = procStart(rec.ShimPID)
	rec.AgentStart, _, _ = procStart(pid) // the agent is at worst a zombie: we have not reaped it
	if err := writeJSONAtomic(sh.dir, FilePID, rec); err != nil {
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

// report sends the PID record on the status descriptor and closes it.
func (sh *shim) report(rec PIDRecord) {
	sh.sendStatus(rec)
}

// fail reports a start failure on the status descriptor and in exit.json (for a runner that
// restarted in between).
func (sh *shim) fail(err error) {
	fmt.Fprintf(os.Stderr, "agent-shim: %v\n", err)
	_ = writeJSONAtomic(sh.dir, FileExit, ExitRecord{Version: recordVersion, Code: 127, ExitedAt: time.Now().UTC(), Error: err.Error()})
	sh.sendStatus(shimStatus{Error: err.Error()})
}

// shimStatus is the failure report on the status descriptor.
type shimStatus struct {
	Error string `json:"error"`
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

// statusFile returns fd 3 when it is the pipe a runner passed, nil otherwise (a shim started
// by hand must not write into whatever else fd 3 is).
func statusFile() *os.File {
	var st syscall.Stat_t
	if err := syscall.Fstat(statusFD, &st); err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFIFO {
		return nil
	}
	syscall.CloseOnExec(statusFD) // the agent must not inherit it
	return os.NewFile(statusFD, "status")
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
		Error string `json:"error"`
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return PIDRecord{}, fmt.Errorf("shim status %q: %w", b, err)
	}
	if st.Error != "" {
		return PIDRecord{}, errors.New(st.Error)
	}
	return st.PIDRecord, nil
}

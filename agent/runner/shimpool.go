package runner

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// shimProc is a started shim waiting for its launch request.
type shimProc struct {
	cmd     *exec.Cmd
	control *os.File // write end of the shim's fd 3
	status  *os.File // read end of the shim's fd 4
	stdin   *os.File // write end of the pipe on the shim's stdin (the agent's, for ndjson)
	done    chan struct{}
}

// refillDelay bounds how long the next warm shim waits for the last launched agent to get
// going.
const refillDelay = 2 * time.Second

// goRuntimeVars are the only variables of the server's environment a shim gets: they tune
// the Go runtime of the shim itself. The agent's environment comes with the launch request.
var goRuntimeVars = []string{"GODEBUG", "GOGC", "GOMEMLIMIT", "GOMAXPROCS", "GORACE", "GOTRACEBACK"}

// spawnShim starts a shim in a process group of its own. It waits for a launch request.
func (r *Runner) spawnShim() (*shimProc, error) {
	var files []*os.File
	closeAll := func() {
		for _, f := range files {
			f.Close()
		}
	}
	pipe := func() (*os.File, *os.File, error) {
		rd, wr, err := os.Pipe()
		if err == nil {
			files = append(files, rd, wr)
		}
		return rd, wr, err
	}
	controlR, controlW, err := pipe()
	if err != nil {
		return nil, fmt.Errorf("shim control pipe: %w", err)
	}
	statusR, statusW, err := pipe()
	if err != nil {
		closeAll()
		return nil, fmt.Errorf("shim status pipe: %w", err)
	}
	stdinR, stdinW, err := pipe()
	if err != nil {
		closeAll()
		return nil, fmt.Errorf("agent stdin pipe: %w", err)
	}
	env := []string{}
	for _, k := range goRuntimeVars {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	cmd := &exec.Cmd{
		Path:        r.cfg.Self,
		Args:        []string{r.cfg.Self, ShimSubcommand},
		Env:         env,
		Dir:         "/",
		Stdin:       stdinR,
		ExtraFiles:  []*os.File{controlR, statusW}, // fd 3, fd 4
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true},
	}
	if err := cmd.Start(); err != nil {
		closeAll()
		return nil, fmt.Errorf("%w: start shim %s: %v", ErrStart, r.cfg.Self, err)
	}
	controlR.Close()
	statusW.Close()
	stdinR.Close()
	sp := &shimProc{cmd: cmd, control: controlW, status: statusR, stdin: stdinW, done: make(chan struct{})}
	r.log.Debug("agent shim started", "shim_pid", cmd.Process.Pid)
	go func() { // always reap the shim: no zombie, whatever happens to it
		err := cmd.Wait()
		r.log.Debug("agent shim reaped", "shim_pid", cmd.Process.Pid, "status", fmt.Sprint(err))
		close(sp.done)
	}()
	return sp, nil
}

// request sends the launch request; the shim starts the agent at once.
func (sp *shimProc) request(req launchRequest) error {
	b, err := json.Marshal(req)
	if err != nil {
		return fmt.Errorf("encode launch request: %w", err)
	}
	_, err = sp.control.Write(append(b, '\n'))
	sp.control.Close()
	if err != nil {
		return fmt.Errorf("send launch request to shim: %w", err)
	}
	return nil
}

// discard ends a shim that was never used: EOF on its control pipe makes it exit.
func (sp *shimProc) discard() {
	_ = sp.cmd.Process.Signal(syscall.SIGKILL) // in case it is stuck
	sp.control.Close()
	sp.stdin.Close()
	sp.status.Close()
	<-sp.done
}

// takeShim returns the warm shim when there is one (warm), or starts one.
func (r *Runner) takeShim() (sp *shimProc, warm bool, err error) {
	select {
	case sp := <-r.spare:
		return sp, true, nil
	default:
		sp, err := r.spawnShim()
		return sp, false, err
	}
}

// refillAfterStart starts the next warm shim once the agent just launched is under way (its
// first output, its end, or refillDelay): a shim starting meanwhile would compete with the
// agent's own start for the CPU.
func (r *Runner) refillAfterStart(p *Process) {
	if r.cfg.NoWarmShim {
		return
	}
	go func() {
		t := time.NewTimer(refillDelay)
		defer t.Stop()
		select {
		case <-p.firstOutput:
		case <-p.done:
		case <-t.C:
		}
		r.refill()
	}()
}

// refill starts a warm shim in the background, unless warm shims are off, one is there or
// the Runner is closing.
func (r *Runner) refill() {
	if r.cfg.NoWarmShim {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	// Only refill fills r.spare, one at a time: a shim started here always finds room, so
	// none is started just to be thrown away (and left a zombie for a moment).
	if r.closed || r.refilling || len(r.spare) > 0 {
		return
	}
	r.refilling = true
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		sp, err := r.spawnShim()
		if err != nil {
			r.mu.Lock()
			r.refilling = false
			r.mu.Unlock()
			r.log.Warn("cannot start a warm agent shim", "err", err)
			return
		}
		r.mu.Lock()
		r.refilling = false
		kept := false
		if !r.closed {
			select {
			case r.spare <- sp:
				kept = true
			default:
			}
		}
		r.mu.Unlock()
		if !kept {
			sp.discard() // here, not in the background: Close waits for it (no zombie left)
		}
	}()
}

// drainSpare ends the warm shim, if any (Close).
func (r *Runner) drainSpare() {
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
	r.wg.Wait()
	select {
	case sp := <-r.spare:
		sp.discard()
	default:
	}
}

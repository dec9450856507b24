package runner

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
)

// relayDrain bounds how long the shim waits, once the agent's group is gone, for the output
// pipes to reach their end: a descendant that left the group may hold them open for ever.
const relayDrain = 2 * time.Second

// relay copies one output stream of the agent from a pipe into its attempt file, secrets
// redacted on the way, so that no secret value is ever written to disk (bugs.md B26's
// cousin: the files are read by get_mission_log, doctor bundles and people).
type relay struct {
	name string
	r    *os.File
	file *os.File
	done chan struct{}
	err  error
}

// outputs returns the stdout and stderr the agent is started with: the attempt files opened
// for appending, or, when the request names secrets, the write ends of two pipes whose read
// ends the shim relays into those files through an agent.RedactingWriter. The caller closes
// both after the fork.
func (sh *shim) outputs(req launchRequest) (stdout, stderr *os.File, err error) {
	rd := agent.NewRedactor(req.Redact)
	var files [2]*os.File
	for i, name := range []string{FileStdout, FileStderr} {
		f, err := os.OpenFile(filepath.Join(sh.dir, name), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		if err != nil {
			closeAll(files[:i]...)
			return nil, nil, fmt.Errorf("agent %s: %w", name, err)
		}
		files[i] = f
	}
	if !rd.Active() {
		return files[0], files[1], nil
	}
	var writers [2]*os.File
	for i, name := range []string{FileStdout, FileStderr} {
		r, w, err := os.Pipe()
		if err != nil {
			closeAll(writers[:i]...)
			sh.drainRelays() // closes the files already handed to a relay
			closeAll(files[i:]...)
			return nil, nil, fmt.Errorf("agent %s pipe: %w", name, err)
		}
		writers[i] = w
		rl := &relay{name: name, r: r, file: files[i], done: make(chan struct{})}
		sh.relays = append(sh.relays, rl)
		go rl.run(rd)
	}
	return writers[0], writers[1], nil
}

// run copies until the pipe ends (every writer closed it, or drain closed it), then writes
// what the redactor held back.
func (rl *relay) run(rd *agent.Redactor) {
	defer close(rl.done)
	w := agent.NewRedactingWriter(rl.file, rd)
	_, err := io.CopyBuffer(w, rl.r, make([]byte, 32<<10))
	if errors.Is(err, os.ErrClosed) {
		err = nil // drained after the agent ended
	}
	rl.err = errors.Join(err, w.Flush(), rl.file.Close())
}

// drainRelays waits for the relays to copy everything the agent wrote: until each pipe
// ends, or relayDrain passed (a leftover descendant keeps a pipe open; its later output is
// lost to the files, never written unredacted). Errors go to the shim's log.
func (sh *shim) drainRelays() {
	timer := time.NewTimer(relayDrain)
	defer timer.Stop()
	expired := false
	for _, rl := range sh.relays {
		if !expired {
			select {
			case <-rl.done:
			case <-timer.C:
				expired = true
			}
		}
		select {
		case <-rl.done:
		default:
			fmt.Fprintf(os.Stderr, "agent-shim: %s still open %v after the agent ended; closing it\n", rl.name, relayDrain)
			_ = rl.r.Close()
			<-rl.done
		}
		_ = rl.r.Close()
		if rl.err != nil {
			fmt.Fprintf(os.Stderr, "agent-shim: relaying %s: %v\n", rl.name, rl.err)
		}
	}
	sh.relays = nil
}

func closeAll(fs ...*os.File) {
	for _, f := range fs {
		if f != nil {
			_ = f.Close()
		}
	}
}

package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
)

// ErrAttemptExists is returned by Launch for an attempt directory that already holds a run.
var ErrAttemptExists = errors.New("attempt directory already holds a run")

// ErrStart is matched by Launch errors that come from starting the agent program (not found,
// not executable, ...): the attempt fails, usually for an environment reason.
var ErrStart = errors.New("agent did not start")

// ErrProgramNotFound is matched (with ErrStart) by Launch errors whose agent program does not
// exist: not on the profile's PATH, or no file at the path given. A person fixes it by
// installing the program or correcting the profile's command; retrying cannot.
var ErrProgramNotFound = errors.New("agent program not found")

// Launch starts one attempt: it builds the environment (when Request.Env is nil), asks the
// adapter for the invocation, writes the brief (Request.BriefFile, from Request.Start.Brief)
// and the invocation's files, starts the shim, and returns once the agent runs and pid.json
// is written. For runtimes with ProtocolStdin it also writes agent.start to the agent's stdin
// and returns only once it is in the pipe (up to StartTimeout): a scheduler that dies right
// after Launch returned must not leave its agent without agent.start.
// Errors wrap ErrAttemptExists, ErrStart or the cause.
func (r *Runner) Launch(ctx context.Context, s Spec) (*Process, error) {
	s.Profile = s.Profile.WithDefaults()
	if s.Adapter == nil || s.AttemptDir == "" {
		return nil, errors.New("launch: Spec needs an Adapter and an AttemptDir")
	}
	if err := r.prepareDir(s.AttemptDir); err != nil {
		return nil, err
	}
	req, secrets, err := r.request(s)
	if err != nil {
		return nil, err
	}
	inv, err := s.Adapter.Invocation(s.Profile, req)
	if err != nil {
		return nil, fmt.Errorf("launch %s: invocation: %w", req.Start.MissionID, err)
	}
	if len(inv.Argv) == 0 {
		return nil, fmt.Errorf("launch %s: the adapter returned an empty argv", req.Start.MissionID)
	}
	if inv.Dir == "" {
		inv.Dir = req.Start.Workspace
	}
	if err := writeFiles(req, inv); err != nil {
		return nil, fmt.Errorf("launch %s: %w", req.Start.MissionID, err)
	}
	secrets = append(secrets, agent.SecretValues(s.Profile, inv.Env)...)
	s.Request = req

	p, err := r.startShim(ctx, s, inv, secrets)
	if err != nil {
		return nil, fmt.Errorf("launch %s: %w", req.Start.MissionID, err)
	}
	return p, nil
}

// prepareDir creates the attempt directory and refuses one already used.
func (r *Runner) prepareDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("attempt directory: %w", err)
	}
	for _, name := range []string{FilePID, FileExit} {
		if _, err := os.Stat(filepath.Join(dir, name)); !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%w: %s", ErrAttemptExists, dir)
		}
	}
	return nil
}

// request fills the defaults of the launch request and returns the secrets of its
// environment.
func (r *Runner) request(s Spec) (agent.LaunchRequest, []string, error) {
	req := s.Request
	var secrets []string
	if req.Env == nil {
		req.Env, secrets = agent.BuildEnv(s.Profile, r.cfg.Environ(), s.Vars)
	}
	if req.Self == "" {
		req.Self = r.cfg.Self
	}
	if req.StateDir == "" {
		if s.Profile.Name == "" || !missionIDPattern.MatchString(s.Profile.Name) {
			return req, nil, fmt.Errorf("launch: profile name %q cannot name a state directory", s.Profile.Name)
		}
		req.StateDir = filepath.Join(r.cfg.DataDir, "profiles", s.Profile.Name)
	}
	if err := os.MkdirAll(req.StateDir, 0o700); err != nil {
		return req, nil, fmt.Errorf("launch: state directory: %w", err)
	}
	req.Start.Type = agent.TypeStart
	if req.Start.Protocol == "" {
		req.Start.Protocol = agent.Version
	}
	return req, secrets, nil
}

// writeFiles writes the brief and the invocation's files: 0600, parents 0700.
func writeFiles(req agent.LaunchRequest, inv agent.Invocation) error {
	files := map[string][]byte{}
	if req.BriefFile != "" {
		files[req.BriefFile] = []byte(req.Start.Brief)
	}
	for p, b := range inv.Files {
		files[p] = b // the adapter's version of a file wins
	}
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	for _, p := range paths {
		if !filepath.IsAbs(p) {
			return fmt.Errorf("file %q: path must be absolute", p)
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			return fmt.Errorf("file %s: %w", p, err)
		}
		if err := os.WriteFile(p, files[p], 0o600); err != nil {
			return fmt.Errorf("file %s: %w", p, err)
		}
	}
	return nil
}

// startShim hands the attempt to a shim, sends agent.start and waits for the shim's report.
func (r *Runner) startShim(ctx context.Context, s Spec, inv agent.Invocation, secrets []string) (*Process, error) {
	req := launchRequest{Dir: s.AttemptDir, Grace: s.Profile.Grace.D(), Argv: inv.Argv, Env: agent.EnvList(inv.Env),
		Cwd: inv.Dir, Stdin: inv.ProtocolStdin, Redact: secrets}
	sp, warm, err := r.takeShim()
	if err != nil {
		return nil, err
	}
	preloaded := false
	request := func(sp *shimProc) error {
		if inv.ProtocolStdin {
			preloaded = preloadStart(sp.stdin, s.Request.Start)
		}
		return sp.request(req)
	}
	if err = request(sp); err != nil && warm {
		// The warm shim died meanwhile (killed from outside): start a fresh one.
		r.log.Warn("warm agent shim unusable; starting another", "err", err)
		sp.discard()
		if sp, err = r.spawnShim(); err != nil {
			return nil, err
		}
		err = request(sp)
	}
	if err == nil && afterLaunchRequest != nil {
		afterLaunchRequest()
	}
	var stdin *stdinWriter
	if err == nil && inv.ProtocolStdin {
		stdin = newStdinWriter(sp.stdin)
		if !preloaded {
			stdin.send(s.Request.Start) // the agent reads it as soon as it runs
		}
	} else {
		sp.stdin.Close()
	}
	var rec PIDRecord
	if err == nil {
		rec, err = r.awaitShim(ctx, sp.status)
	}
	sp.status.Close()
	if err != nil {
		if stdin != nil {
			stdin.close()
		}
		_ = syscall.Kill(-sp.cmd.Process.Pid, syscall.SIGKILL)
		if rec.PGID > 0 {
			_ = signalGroup(rec.PGID, syscall.SIGKILL)
		}
		<-sp.done
		return nil, err
	}
	if stdin != nil && !stdin.flush(r.cfg.StartTimeout) {
		// The agent has not read agent.start yet (a brief larger than the pipe's buffer):
		// it goes on in the background; only a crash of ours in between could lose it.
		r.log.Warn("agent.start not yet taken by the agent", "attempt_dir", s.AttemptDir)
	}
	p := r.newProcess(s, rec, secrets)
	p.stdin = stdin
	p.launched = true
	p.shimDone = sp.done
	go p.watchLaunched(sp.done)
	p.startFollowing()
	r.refillAfterStart(p)
	return p, nil
}

// afterLaunchRequest, when set (by tests only), runs once the shim has been asked to start the
// agent: the moment a crash of the scheduler could come before agent.start is sent.
var afterLaunchRequest func()

// preloadStart writes agent.start into the agent's stdin pipe before the shim is asked to
// start the agent, when the whole message fits the pipe's buffer (it is empty: nothing was
// written to it yet), and reports whether it did. The message then waits in the kernel for
// the agent: a scheduler killed at any moment after the launch request leaves an agent that
// still reads its agent.start (before, an agent started just before the kill read EOF, exited
// 2 and its attempt counted as a crash, under load once in a few SIGKILLs). A message too big
// for the buffer is sent by the stdin writer as before.
func preloadStart(w *os.File, start agent.Start) bool {
	b, err := json.Marshal(start)
	if err != nil {
		return false
	}
	b = append(b, '\n')
	if !pipeHolds(w, len(b)) {
		return false
	}
	n, err := w.Write(b)
	return err == nil && n == len(b)
}

// awaitShim waits for the shim's report on the status pipe.
func (r *Runner) awaitShim(ctx context.Context, statusR *os.File) (PIDRecord, error) {
	deadline := time.Now().Add(r.cfg.StartTimeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	_ = statusR.SetReadDeadline(deadline)
	stopCtx := context.AfterFunc(ctx, func() { _ = statusR.SetReadDeadline(time.Now()) })
	defer stopCtx()
	rec, err := readShimStatus(statusR)
	if err != nil {
		if ctx.Err() != nil {
			return rec, fmt.Errorf("waiting for the agent to start: %w", ctx.Err())
		}
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return rec, fmt.Errorf("%w: the shim did not report within %v", ErrStart, r.cfg.StartTimeout)
		}
		return rec, fmt.Errorf("%w: %w", ErrStart, err)
	}
	return rec, nil
}

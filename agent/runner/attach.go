package runner

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
)

// Attach finds an attempt again after a scheduler restart, from the files in
// Spec.AttemptDir:
//   - exit.json exists: the agent ended while nobody watched; its output is replayed and the
//     Outcome comes from the record;
//   - pid.json names a shim or an agent that still runs (same PID and start time): the
//     runner follows its output (from the start, delivering events after Spec.FromOffset)
//     and supervises it; Stop signals its process group (no agent.cancel: the stdin pipe
//     died with the old scheduler);
//   - neither: the agent was lost; its output is replayed and Exit.Known is false.
//
// The profile's timeouts count from the original start. Request is used for the mission's
// identity in logs and for the secrets to redact (Request.Env or the profile's SecretEnv in
// the server's environment); nothing is written or started.
func (r *Runner) Attach(ctx context.Context, s Spec) (*Process, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.Profile = s.Profile.WithDefaults()
	if s.Adapter == nil || s.AttemptDir == "" {
		return nil, errors.New("attach: Spec needs an Adapter and an AttemptDir")
	}
	var rec PIDRecord
	if err := readJSON(s.AttemptDir, FilePID, &rec); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("attach %s: %w", s.AttemptDir, err)
	}
	env := s.Request.Env
	var secrets []string
	if env == nil {
		env, secrets = agent.BuildEnv(s.Profile, r.cfg.Environ(), s.Vars)
	}
	secrets = append(secrets, agent.SecretValues(s.Profile, env)...)

	p := r.newProcess(s, rec, secrets)
	exitRec, finished, err := readExit(s.AttemptDir)
	if err != nil {
		return nil, fmt.Errorf("attach %s: %w", s.AttemptDir, err)
	}
	switch {
	case finished:
		p.markExited(exitStatus(exitRec))
	case rec.AgentPID > 0 && (alive(rec.ShimPID, rec.ShimStart) || alive(rec.AgentPID, rec.AgentStart)):
		p.log.Info("re-attached to a running agent", "shim_pid", rec.ShimPID)
		go p.watchAttached()
	default:
		p.log.Warn("agent lost: no process and no exit record", "dir", s.AttemptDir)
		p.markExited(agent.ExitStatus{Known: false, Code: -1})
	}
	p.startFollowing()
	return p, nil
}

func exitStatus(rec ExitRecord) agent.ExitStatus {
	return agent.ExitStatus{Known: true, Code: rec.Code, Signal: rec.Signal}
}

// watchAttached waits for the end of an agent this Runner did not start: exit.json
// appears (the shim recorded it), or the shim and the agent are both gone without it (lost).
func (p *Process) watchAttached() {
	wake, unsub := p.r.watch.subscribe(p.spec.AttemptDir)
	defer unsub()
	tick := time.NewTicker(p.r.cfg.LivenessInterval)
	defer tick.Stop()
	for {
		if rec, ok, err := readExit(p.spec.AttemptDir); ok {
			p.markExited(exitStatus(rec))
			return
		} else if err != nil {
			p.log.Error("unreadable exit record", "err", err)
		}
		if !alive(p.rec.ShimPID, p.rec.ShimStart) && !alive(p.rec.AgentPID, p.rec.AgentStart) {
			// The shim may have written exit.json just before it exited.
			if rec, ok, _ := readExit(p.spec.AttemptDir); ok {
				p.markExited(exitStatus(rec))
				return
			}
			p.log.Warn("agent lost: its processes ended without an exit record")
			p.markExited(agent.ExitStatus{Known: false, Code: -1})
			return
		}
		select {
		case <-wake:
		case <-tick.C:
		case <-p.detached:
			return
		}
	}
}

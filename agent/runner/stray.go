package runner

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Stray is an attempt under the data dir whose agent (or its shim) still runs, as its
// pid.json says (same PID and start time), with no exit.json: after a restart the scheduler
// either re-attaches it (Attach) or, when the attempt is not the mission's any more, stops
// it (StopStray).
type Stray struct {
	MissionID string
	Attempt   int
	Dir       string
	Record    PIDRecord
}

// Strays lists the attempts under <DataDir>/attempts whose agent still runs (see Stray), in
// no particular order. Directories that are not attempt directories, or whose records
// cannot be read, are passed over: only a record naming a live process counts. The cost
// follows the attempt directories kept (the history retention prunes them).
func (r *Runner) Strays() ([]Stray, error) {
	dirs, err := filepath.Glob(filepath.Join(r.cfg.DataDir, "attempts", "*", "a*"))
	if err != nil {
		return nil, fmt.Errorf("list attempt directories: %w", err)
	}
	var out []Stray
	for _, dir := range dirs {
		s, ok := strayIn(dir)
		if ok {
			out = append(out, s)
		}
	}
	return out, nil
}

// strayIn reads one attempt directory: a Stray when its agent or shim still runs.
func strayIn(dir string) (Stray, bool) {
	k, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(dir), "a"))
	if err != nil || k < 1 {
		return Stray{}, false
	}
	if _, err := os.Stat(filepath.Join(dir, FileExit)); err == nil {
		return Stray{}, false
	}
	var rec PIDRecord
	if readJSON(dir, FilePID, &rec) != nil || rec.AgentPID <= 0 {
		return Stray{}, false
	}
	if !alive(rec.ShimPID, rec.ShimStart) && !alive(rec.AgentPID, rec.AgentStart) {
		return Stray{}, false
	}
	return Stray{MissionID: filepath.Base(filepath.Dir(dir)), Attempt: k, Dir: dir, Record: rec}, true
}

// StopStray ends a stray's agent as Process.Stop does, without the agent.cancel line (its
// stdin died with the scheduler that launched it): SIGTERM to its process group, grace,
// SIGKILL, and returns once no process of the group is left (ErrStillRunning when one still
// is after the kill). A stray whose shim and agent have both ended meanwhile is not
// signalled (its group id may belong to someone else by now). The shim, outside the group,
// records the exit in exit.json and ends.
func (r *Runner) StopStray(s Stray, grace time.Duration) error {
	rec := s.Record
	if !alive(rec.ShimPID, rec.ShimStart) && !alive(rec.AgentPID, rec.AgentStart) {
		return nil
	}
	if err := signalGroup(rec.PGID, syscall.SIGTERM); err != nil {
		return fmt.Errorf("stop stray agent group %d: %w", rec.PGID, err)
	}
	if waitGone(rec.PGID, grace) {
		return nil
	}
	if err := signalGroup(rec.PGID, syscall.SIGKILL); err != nil {
		return fmt.Errorf("kill stray agent group %d: %w", rec.PGID, err)
	}
	if waitGone(rec.PGID, killWait) {
		return nil
	}
	return fmt.Errorf("stop stray agent group %d: %w", rec.PGID, ErrStillRunning)
}

// waitGone polls until group pgid has no process left, or d passed.
func waitGone(pgid int, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for !groupGone(pgid) {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
	return true
}

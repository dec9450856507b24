package runner

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// Files of one attempt directory. The shim creates them; the runner reads them. They hold
// the agent's output: the profile's secret_env values are redacted on the way in (relay.go),
// but an agent may print other sensitive things, so the directory is private (0700) and the
// files 0600.
const (
	FileStdout  = "stdout.ndjson" // the agent's stdout, appended by the agent or the shim's relay
	FileStderr  = "stderr.log"    // the agent's stderr
	FilePID     = "pid.json"      // PIDRecord, written once the agent started
	FileExit    = "exit.json"     // ExitRecord, written when the agent's process group is gone
	FileShimLog = "shim.log"      // the shim's own diagnostics (and a Go panic, should one happen)
)

// recordVersion is the version of pid.json and exit.json.
const recordVersion = 1

// PIDRecord is pid.json: who runs an attempt, so that a restarted scheduler can tell whether
// it is still running. A PID alone is not an identity (PIDs are reused); PID plus start time
// is (see procStart).
type PIDRecord struct {
	Version    int       `json:"version"`
	ShimPID    int       `json:"shim_pid"`
	ShimStart  string    `json:"shim_start"`
	AgentPID   int       `json:"agent_pid"`
	PGID       int       `json:"pgid"` // the agent's process group (equal to AgentPID)
	AgentStart string    `json:"agent_start"`
	StartedAt  time.Time `json:"started_at"` // when the agent was started (wall clock)
	Program    string    `json:"program"`    // the resolved path of argv[0]
}

// ExitRecord is exit.json: how the agent ended, written by the shim after the agent exited
// and its process group was emptied. Error is set instead when the agent could not be
// started at all.
type ExitRecord struct {
	Version  int       `json:"version"`
	Code     int       `json:"code"`             // exit code; -1 when killed by a signal
	Signal   string    `json:"signal,omitempty"` // "SIGKILL", ... when killed by a signal
	ExitedAt time.Time `json:"exited_at"`
	Error    string    `json:"error,omitempty"`
}

// writeJSONAtomic writes v to dir/name through a temporary file and a rename, so a reader
// sees either nothing or the whole record; with durable, fsync makes it survive a power loss.
func writeJSONAtomic(dir, name string, v any, durable bool) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode %s: %w", name, err)
	}
	tmp, err := os.CreateTemp(dir, "."+name+".*")
	if err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", name, err)
	}
	if durable {
		if err := tmp.Sync(); err != nil {
			tmp.Close()
			return fmt.Errorf("sync %s: %w", name, err)
		}
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	if err := os.Rename(tmp.Name(), filepath.Join(dir, name)); err != nil {
		return fmt.Errorf("rename %s: %w", name, err)
	}
	if !durable {
		return nil
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync() // best effort: not every file system syncs directories
		d.Close()
	}
	return nil
}

// readJSON reads dir/name into v; it returns an error matching fs.ErrNotExist when the file
// is absent.
func readJSON(dir, name string, v any) error {
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("decode %s: %w", filepath.Join(dir, name), err)
	}
	return nil
}

// readExit returns exit.json, ok=false when it does not exist yet.
func readExit(dir string) (ExitRecord, bool, error) {
	var rec ExitRecord
	err := readJSON(dir, FileExit, &rec)
	if errors.Is(err, fs.ErrNotExist) {
		return rec, false, nil
	}
	return rec, err == nil, err
}

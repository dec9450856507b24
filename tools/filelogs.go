package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// FileLogs reads attempt logs from the files the runner keeps for every managed attempt:
// <DataDir>/attempts/<mission id>/a<attempt>/{stdout.ndjson,stderr.log,exit.json}.
type FileLogs struct {
	// DataDir is the scheduler's data directory.
	DataDir string
	// Redact, when set, hides secret values (API keys named in the profiles) in what is
	// returned.
	Redact func(string) string
}

var _ Logs = FileLogs{}

// Files of an attempt directory: the runner's layout (agent/runner FileStdout, FileStderr,
// FileExit; cmd/mcp-scheduler tests that the names agree).
const (
	LogStdout = "stdout.ndjson"
	LogStderr = "stderr.log"
	LogExit   = "exit.json"
)

// AttemptLog implements Logs. The mission id and attempt are validated before any path is
// built, and the directory is checked to stay under DataDir after symlinks are resolved
// (bugs.md B31).
func (l FileLogs) AttemptLog(_ context.Context, m domain.Mission, attempt, tailBytes int) (AttemptLog, error) {
	var out AttemptLog
	dir, err := l.attemptDir(m.ID, attempt)
	if err != nil {
		return out, err
	}
	found := false
	for _, f := range []struct {
		name string
		text *string
		size *int64
	}{{LogStdout, &out.Stdout, &out.StdoutBytes}, {LogStderr, &out.Stderr, &out.StderrBytes}} {
		text, size, cut, err := readTail(filepath.Join(dir, f.name), tailBytes)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return out, err
		}
		found = true
		*f.text, *f.size = l.redact(text), size
		out.Truncated = out.Truncated || cut
	}
	if b, err := os.ReadFile(filepath.Join(dir, LogExit)); err == nil && json.Valid(b) {
		out.Exit = json.RawMessage(bytes.TrimSpace(b))
		found = true
	}
	if !found {
		return out, ErrNoLog
	}
	return out, nil
}

func (l FileLogs) redact(s string) string {
	if l.Redact == nil {
		return s
	}
	return l.Redact(s)
}

func (l FileLogs) attemptDir(missionID string, attempt int) (string, error) {
	if !domain.ValidID(domain.PrefixMission, missionID) {
		return "", fieldError("mission_id", fmt.Sprintf("%q is not a mission id", clip(missionID, 80)), "copy one from list_missions")
	}
	if attempt < 1 {
		return "", fieldError("attempt", fmt.Sprintf("%d is not an attempt number", attempt), "attempts count from 1")
	}
	root, err := filepath.EvalSymlinks(filepath.Join(l.DataDir, "attempts"))
	if errors.Is(err, fs.ErrNotExist) {
		return "", ErrNoLog
	}
	if err != nil {
		return "", fmt.Errorf("attempt logs: %w", err)
	}
	dir := filepath.Join(root, missionID, "a"+strconv.Itoa(attempt))
	real, err := filepath.EvalSymlinks(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return "", ErrNoLog
	}
	if err != nil {
		return "", fmt.Errorf("attempt logs: %w", err)
	}
	if !strings.HasPrefix(real, root+string(filepath.Separator)) {
		return "", fmt.Errorf("attempt logs: %s resolves outside %s", dir, root)
	}
	return real, nil
}

// readTail returns the last n bytes of a file (from the start of a line when it cut),
// as valid UTF-8, with the file's size and whether it cut.
func readTail(path string, n int) (string, int64, bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", 0, false, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", 0, false, err
	}
	size, off := st.Size(), int64(0)
	if size > int64(n) {
		off = size - int64(n)
	}
	b := make([]byte, size-off)
	if _, err := f.ReadAt(b, off); err != nil && !errors.Is(err, io.EOF) {
		return "", 0, false, fmt.Errorf("read %s: %w", path, err)
	}
	if off > 0 {
		if i := bytes.IndexByte(b, '\n'); i >= 0 && i < len(b)-1 {
			b = b[i+1:]
		}
	}
	return strings.ToValidUTF8(string(b), "\uFFFD"), size, off > 0, nil
}

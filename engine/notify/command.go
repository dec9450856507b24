package notify

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// Expand replaces the placeholders {type}, {summary}, {mission_id}, {voyage_id},
// {escalation_id} and {id} in each argument with the message's field (so that
// ["notify-send", "mcp-scheduler", "{summary}"] works without a shell); nothing else is
// interpreted.
func Expand(argv []string, m Message) []string {
	r := strings.NewReplacer("{type}", m.Type, "{summary}", m.Summary, "{mission_id}", m.MissionID,
		"{voyage_id}", m.VoyageID, "{escalation_id}", m.EscalationID, "{id}", m.ID)
	out := make([]string, len(argv))
	for i, a := range argv {
		out[i] = r.Replace(a)
	}
	return out
}

// runCommand runs s.Command (expanded for m) with body on stdin, in its own process group,
// killed with the group when ctx ends (the sink's timeout). Exit status 0 is a delivery; the
// error names the exit and the start of stderr.
func runCommand(ctx context.Context, s Sink, m Message, body []byte) error {
	argv := Expand(s.Command, m)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stdin = bytes.NewReader(body)
	cmd.Env = append(os.Environ(), "MCP_SCHEDULER_NOTIFY_TYPE="+m.Type, "MCP_SCHEDULER_NOTIFY_ID="+m.ID)
	var stderr bytes.Buffer
	cmd.Stderr = &limited{w: &stderr, n: 500}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 2 * time.Second
	err := cmd.Run()
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		return fmt.Errorf("command %s: stopped after its timeout %v", argv[0], s.Timeout)
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return fmt.Errorf("command %s exited with %v: %s", argv[0], exit.ProcessState, strings.TrimSpace(stderr.String()))
	}
	return fmt.Errorf("command %s: %w", argv[0], err)
}

// limited keeps the first n bytes written to it and discards the rest.
type limited struct {
	w interface{ Write([]byte) (int, error) }
	n int
}

func (l *limited) Write(p []byte) (int, error) {
	if l.n > 0 {
		k := min(l.n, len(p))
		l.n -= k
		if _, err := l.w.Write(p[:k]); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

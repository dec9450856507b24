package scheduler

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

	"github.com/mcp-scheduler/mcp-scheduler/agent"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// checkEnv is the allow-list of variables the repository's check commands get from the
// server's environment (like agents, never the MCP client's whole environment).
var checkEnv = []string{"PATH", "HOME", "USER", "LANG", "TMPDIR", "GOPATH", "GOCACHE", "GOMODCACHE", "GOFLAGS",
	"GOPROXY", "GONOSUMDB", "GOTOOLCHAIN", "CARGO_HOME", "RUSTUP_HOME", "NODE_PATH", "npm_config_cache"}

// checkOutputLimit is how much of a failing check's output is kept.
const checkOutputLimit = 16 << 10

// repoChecks returns the function the workspace manager runs on the merged tree before it moves
// the target branch: each configured command in order, argv only (never a shell), in its own
// process group, killed with the group when it exceeds its timeout. nil when the repository
// has no checks.
func repoChecks(pol RepoPolicy) func(ctx context.Context, dir string) error {
	if len(pol.Checks) == 0 {
		return nil
	}
	return func(ctx context.Context, dir string) error {
		for _, argv := range pol.Checks {
			if err := runCheck(ctx, dir, argv, pol.CheckTimeout); err != nil {
				return err
			}
		}
		return nil
	}
}

func runCheck(ctx context.Context, dir string, argv []string, timeout time.Duration) error {
	if len(argv) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	env, _ := agent.BuildEnv(agent.Profile{Env: checkEnv}, os.Environ(), nil)
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	if err == nil {
		return nil
	}
	what := "failed: " + err.Error()
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		what = fmt.Sprintf("timed out after %s", timeout)
	}
	return fmt.Errorf("%s\n%s", domain.CheckFailedLine(strings.Join(argv, " "), what), tail(out.String(), checkOutputLimit))
}

package e2e

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
)

// The stdio relay: an MCP client (Claude Code) starts the test binary as its MCP server
// command with relayEnvOut set; the test binary then runs the real server (its argv) and
// copies the server's stdout both to the client and to a file, so a test can check that
// nothing but JSON-RPC reached stdout. stdin is the client's, handed over as is; the server's
// stderr goes to relayEnvErr (and on to the client's stderr). Signals the client sends (Claude
// Code sends SIGINT, then SIGTERM) are passed on, and the relay exits with the server's code.
const (
	relayEnvOut = "MCP_SCHEDULER_E2E_RELAY_STDOUT"
	relayEnvErr = "MCP_SCHEDULER_E2E_RELAY_STDERR"
)

func relayMain(argv []string) int {
	if len(argv) == 0 {
		fmt.Fprintln(os.Stderr, "relay: no command")
		return 2
	}
	out, err := os.OpenFile(os.Getenv(relayEnvOut), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		fmt.Fprintln(os.Stderr, "relay:", err)
		return 2
	}
	defer out.Close()
	var errw io.Writer = os.Stderr
	if p := os.Getenv(relayEnvErr); p != "" {
		f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			fmt.Fprintln(os.Stderr, "relay:", err)
			return 2
		}
		defer f.Close()
		errw = io.MultiWriter(f, os.Stderr)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, relayEnvOut+"=") && !strings.HasPrefix(kv, relayEnvErr+"=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, io.MultiWriter(os.Stdout, out), errw
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "relay:", err)
		return 2
	}
	go func() {
		for s := range sigs {
			_ = cmd.Process.Signal(s)
		}
	}()
	err = cmd.Wait()
	signal.Stop(sigs)
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ee.ExitCode()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "relay:", err)
		return 2
	}
	return 0
}

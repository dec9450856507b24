package worktree

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// The test binary re-executes itself with helperEnv set to play a second process: one that
// holds a git lock file and gets SIGKILLed (B16), or one that lands and gets SIGKILLed at a
// random moment (crash test).
const helperEnv = "WORKTREE_TEST_HELPER"

// helperArgsEnv carries the helper's JSON arguments.
const helperArgsEnv = "WORKTREE_TEST_HELPER_ARGS"

type helperArgs struct {
	// hold-lock
	LockPath string `json:"lock_path,omitempty"`
	// land
	DataDir   string    `json:"data_dir,omitempty"`
	RepoDir   string    `json:"repo_dir,omitempty"`
	Workspace Workspace `json:"workspace"`
	// KillAt names a testStep at which the land helper SIGKILLs itself KillAfter later (its
	// whole process group, git included, when KillGroup).
	KillAt    string        `json:"kill_at,omitempty"`
	KillAfter time.Duration `json:"kill_after,omitempty"`
	KillGroup bool          `json:"kill_group,omitempty"`
}

// killAtStep makes the helper kill itself (or its process group) args.KillAfter after it
// reaches step args.KillAt.
func killAtStep(args helperArgs) {
	if args.KillAt == "" {
		return
	}
	testStep = func(name string) {
		if name != args.KillAt {
			return
		}
		pid := os.Getpid()
		if args.KillGroup {
			pid = -syscall.Getpgrp()
		}
		go func() {
			time.Sleep(args.KillAfter)
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}()
	}
}

func runHelper(mode string) int {
	var args helperArgs
	if err := json.Unmarshal([]byte(os.Getenv(helperArgsEnv)), &args); err != nil {
		os.Stderr.WriteString("helper args: " + err.Error() + "\n")
		return 2
	}
	switch mode {
	case "hold-lock":
		// Create the lock the way git does (O_EXCL) and keep it open until killed.
		f, err := os.OpenFile(args.LockPath, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			return 3
		}
		defer f.Close()
		os.Stdout.WriteString("ready\n")
		time.Sleep(time.Minute)
		return 0
	case "land":
		killAtStep(args)
		m, err := NewManager(Config{DataDir: args.DataDir, StaleLockAge: 200 * time.Millisecond})
		if err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			return 4
		}
		defer m.Close()
		r, err := m.Open(args.RepoDir)
		if err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			return 5
		}
		l, err := m.Land(context.Background(), LandRequest{Repo: r, MissionID: args.Workspace.MissionID,
			Attempt: args.Workspace.Attempt, Workspace: args.Workspace})
		if err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			return 6
		}
		_ = json.NewEncoder(os.Stdout).Encode(l)
		return 0
	}
	return 1
}

// helperCommand builds the command that re-executes the test binary in a helper mode.
func helperCommand(mode string, args helperArgs) *exec.Cmd {
	data, _ := json.Marshal(args)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	// GORACE: under -race the runtime otherwise sleeps a second before exiting.
	cmd.Env = append(os.Environ(), helperEnv+"="+mode, helperArgsEnv+"="+string(data), "GORACE=atexit_sleep_ms=0")
	return cmd
}

package worktree

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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
	// HoldLock, with KillAt: at that step the helper first starts a real git in RepoDir that
	// takes this lock of the checkout and waits (holdingGit), then SIGKILLs its process group
	// at once, so that git dies holding it: "HEAD", "ORIG_HEAD", "refs/heads/<b>" or "index".
	HoldLock string `json:"hold_lock,omitempty"`
	// open-remote: the URL of the remote the helper opens as "shop".
	RemoteURL string `json:"remote_url,omitempty"`
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
		if args.HoldLock != "" {
			if _, _, err := holdingGit(args.RepoDir, args.HoldLock, filepath.Join(args.DataDir, "never")); err != nil {
				os.Stderr.WriteString("hold " + args.HoldLock + ": " + err.Error() + "\n")
				os.Exit(7)
			}
			_ = syscall.Kill(-syscall.Getpgrp(), syscall.SIGKILL)
			select {}
		}
		pid := os.Getpid()
		if args.KillGroup {
			pid = -syscall.Getpgrp()
		}
		go func() {
			time.Sleep(args.KillAfter) // the kill's moment, chosen by the test
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
		time.Sleep(time.Minute) // stays alive (holding the lock) until the test kills it; a minute bounds an orphan
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
	case "open-remote":
		m, err := NewManager(Config{DataDir: args.DataDir, Remotes: []Remote{{Name: "shop", URL: args.RemoteURL}}})
		if err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			return 4
		}
		defer m.Close()
		if _, err := m.Open("shop"); err != nil {
			os.Stdout.WriteString("open failed: " + err.Error() + "\n")
			return 5
		}
		os.Stdout.WriteString("opened\n")
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

// holdingGit starts a real git in the checkout dir that takes lock (see helperArgs.HoldLock)
// the way git does and then waits: `git update-ref --stdin` with a prepared transaction for
// a ref ("option no-deref" for HEAD, so only HEAD.lock is taken), waiting for the rest of its
// input, or `git commit -a --allow-empty` whose editor waits until the file proceed exists
// (the index). It returns once the lock file exists, with the process and release, which ends
// the transaction's input (git then aborts it and removes its locks) or creates proceed.
func holdingGit(dir, lock, proceed string) (*exec.Cmd, func(), error) {
	gitDir := filepath.Join(dir, ".git")
	cmd := exec.Command("git", "-C", dir, "update-ref", "--stdin")
	lockPath := filepath.Join(gitDir, filepath.FromSlash(lock)+".lock")
	var release func()
	if lock == "index" {
		editor := proceed + ".editor.sh"
		script := "#!/bin/sh\nwhile [ ! -e '" + proceed + "' ]; do sleep 0.02; done\necho 'person commit' > \"$1\"\n"
		if err := os.WriteFile(editor, []byte(script), 0o755); err != nil {
			return nil, nil, err
		}
		cmd = exec.Command("git", "-C", dir, "commit", "-q", "-a", "--allow-empty")
		cmd.Env = append(os.Environ(), "GIT_EDITOR="+editor, "GIT_AUTHOR_NAME=Person", "GIT_AUTHOR_EMAIL=person@example.invalid",
			"GIT_COMMITTER_NAME=Person", "GIT_COMMITTER_EMAIL=person@example.invalid")
		release = func() { _ = os.WriteFile(proceed, nil, 0o644) }
	} else {
		head, err := exec.Command("git", "-C", dir, "rev-parse", "HEAD").Output()
		if err != nil {
			return nil, nil, err
		}
		opt := ""
		if lock == "HEAD" {
			opt = "option no-deref\n"
		}
		pr, pw, err := os.Pipe()
		if err != nil {
			return nil, nil, err
		}
		defer pr.Close()
		if _, err := pw.WriteString("start\n" + opt + "update " + lock + " " + strings.TrimSpace(string(head)) + "\nprepare\n"); err != nil {
			return nil, nil, err
		}
		cmd.Stdin, release = pr, func() { pw.Close() }
	}
	if err := cmd.Start(); err != nil {
		release()
		return nil, nil, err
	}
	// Until git took the lock, or ended without it (this runs in helper processes too, which
	// have no testing.T: the caller's test deadline bounds it).
	for {
		if _, err := os.Stat(lockPath); err == nil {
			return cmd, release, nil
		}
		if ended(cmd.Process.Pid) {
			release()
			return cmd, release, fmt.Errorf("git ended before %s appeared", lockPath)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// ended reports whether the child process pid exited (it is a zombie until waited for, or
// gone), from /proc/pid/stat.
func ended(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	i := bytes.LastIndexByte(stat, ')') // the state follows the command name: "pid (comm) S …"
	return i < 0 || i+2 >= len(stat) || stat[i+2] == 'Z' || stat[i+2] == 'X'
}

package refagent

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// gitTimeout bounds one git command.
const gitTimeout = 2 * time.Minute

// commit commits the files written since the last commit with message msg (read by git from
// stdin: no shell, no quoting). Nothing written, or nothing changed, commits nothing.
func (a *refAgent) commit(msg string) error {
	if msg == "" {
		msg = a.start.MissionID + ": reference agent changes"
	}
	if len(a.written) == 0 {
		a.out.log("info", "nothing to commit")
		return nil
	}
	if _, err := a.git(nil, append([]string{"add", "--"}, a.written...)...); err != nil {
		return err
	}
	staged, err := a.git(nil, "diff", "--cached", "--name-only")
	if err != nil {
		return err
	}
	a.written = nil
	if strings.TrimSpace(staged) == "" {
		a.out.log("info", "nothing to commit (files unchanged)")
		return nil
	}
	if _, err := a.git(strings.NewReader(msg), "-c", "commit.gpgsign=false", "commit", "--no-verify", "-q", "-F", "-"); err != nil {
		return err
	}
	head, err := a.git(nil, "rev-parse", "HEAD")
	if err != nil {
		return err
	}
	head = strings.TrimSpace(head)
	a.commits = append(a.commits, "commit "+head)
	a.out.log("info", "committed "+head)
	return nil
}

// git runs `git -C <workspace> args...` and returns its stdout.
func (a *refAgent) git(stdin *strings.Reader, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), gitTimeout)
	defer cancel()
	// No automatic gc or maintenance: a commit in a worktree of a repository with many
	// worktrees otherwise starts `git gc --auto`, whose `reflog expire --all` walked every
	// worktree for minutes of CPU in a soak (the person's repository is theirs to maintain).
	pre := []string{"-C", a.ws, "-c", "gc.auto=0", "-c", "maintenance.auto=false"}
	cmd := exec.CommandContext(ctx, "git", append(pre, args...)...)
	cmd.Env = gitEnv()
	if stdin != nil {
		cmd.Stdin = stdin
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("git %s: %v: %s", args[0], err, strings.TrimSpace(errb.String()))
	}
	return out.String(), nil
}

// gitEnv is our environment plus what makes git predictable, and an identity when none is
// given (the agent's allow-listed environment often has no HOME, so no git config).
func gitEnv() []string {
	env := append(os.Environ(), "LC_ALL=C", "GIT_TERMINAL_PROMPT=0", "GIT_EDITOR=true")
	for k, v := range map[string]string{
		"GIT_AUTHOR_NAME": "mcp-scheduler reference agent", "GIT_AUTHOR_EMAIL": "reference-agent@mcp-scheduler.invalid",
		"GIT_COMMITTER_NAME": "mcp-scheduler reference agent", "GIT_COMMITTER_EMAIL": "reference-agent@mcp-scheduler.invalid",
	} {
		if _, ok := os.LookupEnv(k); !ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// resolve rewrites every unmerged file (conflict markers from a merge) keeping both sides,
// ours first, and marks it written so that @commit stages it and concludes the merge.
func (a *refAgent) resolve() error {
	out, err := a.git(nil, "diff", "--name-only", "--diff-filter=U", "-z")
	if err != nil {
		return err
	}
	for _, rel := range strings.Split(strings.TrimRight(out, "\x00"), "\x00") {
		if rel == "" {
			continue
		}
		path := filepath.Join(a.ws, rel)
		body, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if err := os.WriteFile(path, keepBothSides(body), 0o644); err != nil {
			return err
		}
		a.written = append(a.written, rel)
		a.resolved = append(a.resolved, rel)
		a.out.log("info", "resolved conflict in "+rel+" keeping both sides")
	}
	a.resolveRan, a.commitsAtResolv = true, len(a.commits)
	if len(a.resolved) == 0 {
		a.out.log("info", "no unmerged files to resolve")
	}
	return nil
}

// doneSummary is @done's summary when it has no text: what @resolve found, when it ran
// (the repairer's default script), else "done".
func (a *refAgent) doneSummary() string {
	switch {
	case !a.resolveRan:
		return "done"
	case len(a.resolved) == 0:
		return "no conflicts to resolve (git reports no unmerged files): changed nothing"
	}
	s := "resolved the conflicts in " + strings.Join(a.resolved, ", ") + ", keeping both sides"
	if len(a.commits) > a.commitsAtResolv {
		s += ", and committed the merge"
	}
	return s
}

// keepBothSides drops git's conflict markers (and a diff3 base section), keeping the lines of
// both sides, ours first.
func keepBothSides(body []byte) []byte {
	var out []string
	inBase := false
	for _, line := range strings.SplitAfter(string(body), "\n") {
		switch {
		case strings.HasPrefix(line, "<<<<<<< "), strings.HasPrefix(line, ">>>>>>> "):
			inBase = false
			continue
		case strings.HasPrefix(line, "||||||| "):
			inBase = true
			continue
		case line == "=======\n" || line == "=======":
			inBase = false
			continue
		}
		if !inBase {
			out = append(out, line)
		}
	}
	return []byte(strings.Join(out, ""))
}

package worktree

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// gitRunner starts git processes the one way this package allows: argv only, `-C dir`, a
// fixed environment, hooks off, network transports off, a timeout, stderr captured.
type gitRunner struct {
	path    string
	timeout time.Duration
	author  Signature
	baseEnv []string
	log     *slog.Logger
	// lfs is where git-lfs is on the PATH of baseEnv ("" when it is not there): without it
	// every git process runs with the LFS filter off (lfsOffConfig), see lfs.go.
	lfs string
}

// runOpts tunes one git invocation.
type runOpts struct {
	// stdin is fed to the process (commit messages).
	stdin []byte
	// readOnly sets GIT_OPTIONAL_LOCKS=0 so status-like reads never take index.lock (B16).
	readOnly bool
	// allowFile permits the local "file" transport (isolated copies: clone and fetch of a
	// local path). Every other transport stays forbidden.
	allowFile bool
	// remote permits the transports a Remote may use (ssh, git, http, https, file) for
	// clone, fetch and push of a configured remote; remote helpers (ext::, fd::) stay off.
	remote bool
	// pointers writes Git LFS files as their pointers (GIT_LFS_SKIP_SMUDGE=1): for the
	// commands that make a workspace's files, which never download an LFS object; the
	// workspace's content then comes from the local LFS store (lfsCheckout).
	pointers bool
}

// fixedConfig is passed as -c to every git process: no hooks (ours are not the person's
// commits, and an agent can write into the shared hooks directory), no network, no signing
// prompts, no automatic gc in the middle of our operations, no submodule recursion, paths
// unquoted in messages.
var fixedConfig = []string{
	"core.hooksPath=/dev/null",
	"protocol.allow=never",
	"commit.gpgSign=false",
	"gc.auto=0",
	"maintenance.auto=false",
	"submodule.recurse=false",
	"advice.detachedHead=false",
	"core.quotePath=false",
	"core.fsmonitor=false", // never start a monitor daemon in a workspace
}

// locatingVars are inherited variables that would redirect git to another repository, index
// or identity; they are dropped from the environment of every git process.
var locatingVars = []string{
	"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY",
	"GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_COMMON_DIR", "GIT_NAMESPACE", "GIT_PREFIX",
	"GIT_QUARANTINE_PATH", "GIT_CEILING_DIRECTORIES", "GIT_DISCOVERY_ACROSS_FILESYSTEM",
	"GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_AUTHOR_DATE",
	"GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "GIT_COMMITTER_DATE",
	"GIT_OPTIONAL_LOCKS", "GIT_EDITOR", "GIT_SEQUENCE_EDITOR", "GIT_MERGE_AUTOEDIT",
	"GIT_TERMINAL_PROMPT", "GIT_ALLOW_PROTOCOL", "GIT_PROTOCOL_FROM_USER", "LC_ALL", "LANG",
}

func newGitRunner(path string, timeout time.Duration, author Signature, log *slog.Logger) *gitRunner {
	env := make([]string, 0, len(os.Environ())+12)
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if !isLocatingVar(name) {
			env = append(env, kv)
		}
	}
	env = append(env,
		"LC_ALL=C",
		"GIT_TERMINAL_PROMPT=0",
		"GIT_EDITOR=true",
		"GIT_SEQUENCE_EDITOR=true",
		"GIT_MERGE_AUTOEDIT=no",
		"GIT_PROTOCOL_FROM_USER=0",
		"GIT_AUTHOR_NAME="+author.Name,
		"GIT_AUTHOR_EMAIL="+author.Email,
		"GIT_COMMITTER_NAME="+author.Name,
		"GIT_COMMITTER_EMAIL="+author.Email,
	)
	g := &gitRunner{path: path, timeout: timeout, author: author, baseEnv: env, log: log}
	g.lfs = lookPathIn("git-lfs", os.Getenv("PATH"))
	return g
}

func isLocatingVar(name string) bool {
	for _, v := range locatingVars {
		if name == v {
			return true
		}
	}
	return false
}

// run executes `git -C dir -c … args…` and returns its standard output. A non-zero exit gives
// a *GitError carrying the exit code and stderr; the caller decides whether an exit code such
// as merge-tree's 1 (conflicts) is a failure.
func (g *gitRunner) run(ctx context.Context, dir string, o runOpts, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, g.timeout)
	defer cancel()
	argv := make([]string, 0, len(args)+2+2*len(fixedConfig)+2)
	argv = append(argv, "-C", dir)
	for _, c := range fixedConfig {
		argv = append(argv, "-c", c)
	}
	if o.allowFile {
		argv = append(argv, "-c", "protocol.file.allow=always")
	}
	if o.remote {
		for _, p := range remoteSchemes {
			argv = append(argv, "-c", "protocol."+p+".allow=always")
		}
	}
	if g.lfs == "" {
		for _, c := range lfsOffConfig {
			argv = append(argv, "-c", c)
		}
	}
	argv = append(argv, args...)
	cmd := exec.CommandContext(ctx, g.path, argv...)
	cmd.Env = g.baseEnv
	if o.readOnly {
		cmd.Env = append(append([]string(nil), g.baseEnv...), "GIT_OPTIONAL_LOCKS=0")
	}
	if o.pointers {
		cmd.Env = append(append([]string(nil), cmd.Env...), "GIT_LFS_SKIP_SMUDGE=1")
	}
	if o.remote {
		batchMode(cmd)
	}
	// SIGTERM first: git removes its own lock files on SIGTERM; SIGKILL only after a delay.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &limitedBuffer{max: 8 << 10, buf: &stderr}
	if o.stdin != nil {
		cmd.Stdin = bytes.NewReader(o.stdin)
	}
	start := time.Now()
	err := cmd.Run()
	if g.log.Enabled(ctx, slog.LevelDebug) {
		g.log.Debug("git", "args", strings.Join(args, " "), "dir", dir, "duration_ms",
			float64(time.Since(start).Microseconds())/1000, "ok", err == nil)
	}
	if err == nil {
		return stdout.Bytes(), nil
	}
	msg := stderr.String()
	if strings.TrimSpace(msg) == "" { // some refusals ("nothing to commit") go to stdout
		msg = string(stdout.Bytes()[:min(stdout.Len(), 8<<10)])
	}
	ge := &GitError{Dir: dir, Args: args, ExitCode: -1, Stderr: msg, Err: err}
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.Exited() {
		ge.ExitCode = ee.ExitCode()
	}
	if ctxErr := ctx.Err(); ctxErr != nil {
		ge.Err = fmt.Errorf("%w (%v)", ctxErr, err)
	}
	if lfsFailed(msg) {
		return stdout.Bytes(), &LFSError{Git: ge, OnPath: g.lfs != ""}
	}
	return stdout.Bytes(), ge
}

// batchMode keeps a git process that talks to a remote from asking anyone anything. ssh reads
// passwords, passphrases and "continue connecting (yes/no)?" from the controlling terminal,
// not stdin, and GIT_TERMINAL_PROMPT=0 does not stop it: run from a person's shell (serve,
// daemon in a terminal), the process would wait on that terminal, unseen, until its timeout.
// So it runs in a session of its own (Setsid: no controlling terminal, ssh cannot open
// /dev/tty) with SSH_ASKPASS_REQUIRE=never (no askpass program either, even with DISPLAY
// set): an unknown host key or a missing key fails at once with ssh's own message ("Host key
// verification failed", "Permission denied (publickey)"), which the caller reports. The
// person's ssh configuration (keys, agent, known_hosts, GIT_SSH_COMMAND, core.sshCommand)
// still applies.
func batchMode(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	cmd.Env = append(append([]string(nil), cmd.Env...), "SSH_ASKPASS_REQUIRE=never")
}

// exitCode returns the exit code of a *GitError, or -1.
func exitCode(err error) int {
	var ge *GitError
	if errors.As(err, &ge) {
		return ge.ExitCode
	}
	return -1
}

// stderrOf returns the captured stderr of a *GitError, or "".
func stderrOf(err error) string {
	var ge *GitError
	if errors.As(err, &ge) {
		return ge.Stderr
	}
	return ""
}

// limitedBuffer keeps the first max bytes written and drops the rest.
type limitedBuffer struct {
	max int
	buf *bytes.Buffer
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := l.max - l.buf.Len(); room > 0 {
		if len(p) > room {
			l.buf.Write(p[:room])
		} else {
			l.buf.Write(p)
		}
	}
	return len(p), nil
}

// gitVersion parses "git version 2.39.5" (also "2.39.3 (Apple Git-146)") into major, minor.
func gitVersion(out string) (major, minor int, err error) {
	fields := strings.Fields(out)
	if len(fields) < 3 || fields[0] != "git" || fields[1] != "version" {
		return 0, 0, fmt.Errorf("unexpected `git --version` output %q", strings.TrimSpace(out))
	}
	if _, err := fmt.Sscanf(fields[2], "%d.%d", &major, &minor); err != nil {
		return 0, 0, fmt.Errorf("unexpected git version %q: %w", fields[2], err)
	}
	return major, minor, nil
}

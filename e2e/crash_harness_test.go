package e2e_test

// The harness of the crash, leadership and pull-mode end-to-end tests: the built binary,
// a sandbox (home, repository, data dir, configuration file), scheduler processes started and
// killed like a person or a service manager would, the database read from the test process
// (another process on the same data dir, as the CLI is), and checks on git history and on the
// agent processes left in /proc.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/agent/runner"
	"github.com/mcp-scheduler/mcp-scheduler/e2e"
	"github.com/mcp-scheduler/mcp-scheduler/e2e/testenv"
	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/storage/teststore"
)

// xbinary is the mcp-scheduler binary the package's TestMain built (e2e/binary_test.go).
func xbinary(t testing.TB) string {
	t.Helper()
	bin := e2e.BuiltBinary()
	require.NotEmpty(t, bin, "TestMain of package e2e builds the binary")
	return bin
}

// xsettings are the [scheduler] timings of a sandbox and its extra configuration.
type xsettings struct {
	Tick, LeaseTTL, Renew, LeaderLease time.Duration
	MaxConcurrency                     int
	RetryBudget                        int
	// Extra is appended to the configuration file (more profiles, repository policy keys
	// go in RepoExtra).
	Extra, RepoExtra string
	// RefProfile adds the reference-agent profile "ref" (runtime ndjson).
	RefProfile bool
}

func (s xsettings) withDefaults() xsettings {
	if s.Tick == 0 {
		s.Tick = 200 * time.Millisecond
	}
	if s.LeaseTTL == 0 {
		s.LeaseTTL = 10 * time.Second
	}
	if s.Renew == 0 {
		s.Renew = s.LeaseTTL / 4
	}
	if s.LeaderLease == 0 {
		s.LeaderLease = 2 * time.Second
	}
	if s.MaxConcurrency == 0 {
		s.MaxConcurrency = 4
	}
	return s
}

// xenv is one sandbox: a home, a git repository with one commit on main, a data dir and a
// configuration file every scheduler process of the test shares.
type xenv struct {
	t       testing.TB
	ctx     context.Context
	bin     string
	home    string
	repo    string
	data    string
	logs    string
	cfgPath string
	env     []string
	set     xsettings

	mu    sync.Mutex
	procs []*xproc
	st    engine.Store
	eng   *engine.Engine
}

// gitEnvNames are the variables the reference agent needs to commit (its profile's
// allow-list).
var gitEnvNames = []string{"PATH", "HOME", "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME",
	"GIT_COMMITTER_EMAIL", "GIT_CONFIG_NOSYSTEM", "LC_ALL"}

func newXEnv(t testing.TB, set xsettings) *xenv {
	t.Helper()
	set = set.withDefaults()
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	e := &xenv{t: t, ctx: context.Background(), bin: xbinary(t), home: root, repo: filepath.Join(root, "repo"),
		data: filepath.Join(root, "state"), logs: filepath.Join(root, "logs"), cfgPath: filepath.Join(root, "config.toml"), set: set}
	require.NoError(t, os.MkdirAll(e.repo, 0o755))
	require.NoError(t, os.MkdirAll(e.logs, 0o755))
	e.env = append(testenv.GitEnv(), "HOME="+root, "XDG_CONFIG_HOME="+filepath.Join(root, "xdgconfig"),
		"XDG_STATE_HOME="+filepath.Join(root, "xdgstate"), "MCP_SCHEDULER_DATA_DIR="+e.data,
		"MCP_SCHEDULER_CONFIG="+e.cfgPath, "PATH="+os.Getenv("PATH"), "NO_COLOR=1")
	e.git("init", "-q", "-b", "main")
	require.NoError(t, os.WriteFile(filepath.Join(e.repo, "README.md"), []byte("# sample\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(e.repo, "shared.txt"), []byte("line one\n"), 0o644))
	e.git("add", "-A")
	e.git("commit", "-q", "-m", "initial")
	require.NoError(t, os.WriteFile(e.cfgPath, []byte(e.config()), 0o600))
	t.Cleanup(e.cleanup)
	return e
}

// config is the configuration file: short timings, no resource thresholds, the repository, the
// reference-agent profile. The gate is off here, not because it would stall (it never starts
// fewer than one agent) but because these tests need several agents at once to prove what
// they are about — agents ending during an outage, two processes dispatching — and on a busy
// machine the gate runs one at a time; the gate itself is tested in engine/scheduler and the
// main-agent and real-repository tests run with it on.
func (e *xenv) config() string {
	s := e.set
	var b strings.Builder
	fmt.Fprintf(&b, "log_level = \"debug\"\n\n[scheduler]\ntick = %q\nlease_ttl = %q\nrenew_interval = %q\nleader_lease = %q\n",
		s.Tick, s.LeaseTTL, s.Renew, s.LeaderLease)
	fmt.Fprintf(&b, "backoff_initial = \"100ms\"\nbackoff_max = \"400ms\"\nmax_concurrency = %d\nper_repository = %d\nretry_budget = %d\ngrace = \"500ms\"\n",
		s.MaxConcurrency, s.MaxConcurrency, max(s.RetryBudget, 0))
	b.WriteString("\n[resources]\nmax_load_per_cpu = 0.0\nmin_free_memory_mb = 0\nmin_free_disk_mb = 0\n")
	fmt.Fprintf(&b, "\n[[repositories]]\npath = %q\n%s\n", e.repo, s.RepoExtra)
	if s.RefProfile {
		q := make([]string, len(gitEnvNames))
		for i, n := range gitEnvNames {
			q[i] = strconv.Quote(n)
		}
		fmt.Fprintf(&b, "\n[[profiles]]\nname = \"ref\"\nruntime = \"ndjson\"\ncommand = [\"{mcp_scheduler}\", \"reference-agent\"]\nenv = [%s]\nmax_concurrency = %d\n",
			strings.Join(q, ", "), s.MaxConcurrency)
	}
	b.WriteString(s.Extra)
	return b.String()
}

func (e *xenv) git(args ...string) string {
	e.t.Helper()
	cmd := exec.Command("git", append([]string{"-C", e.repo}, args...)...)
	cmd.Env = e.env
	out, err := cmd.CombinedOutput()
	require.NoError(e.t, err, "git %v: %s", args, out)
	return strings.TrimSpace(string(out))
}

// engine opens the data dir's database from the test process (as the CLI does).
func (e *xenv) engine() *engine.Engine {
	e.t.Helper()
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.eng == nil {
		require.NoError(e.t, os.MkdirAll(e.data, 0o700))
		st, err := teststore.Open(e.ctx, filepath.Join(e.data, "mcp-scheduler.db")) // the binary's store
		require.NoError(e.t, err)
		e.st = st
		e.eng = engine.New(st, engine.Options{DefaultRepository: e.repo, LeaseTTL: e.set.LeaseTTL})
	}
	return e.eng
}

// xproc is one mcp-scheduler process of a sandbox; its stderr (the log) goes to a file.
type xproc struct {
	name     string
	cmd      *exec.Cmd
	log      string
	done     chan struct{}
	err      error
	deadline time.Time // the end of the test's waits (testenv.WaitDeadline)
}

// start runs the binary with args in the repository.
func (e *xenv) start(name string, args ...string) *xproc {
	e.t.Helper()
	e.mu.Lock()
	n := len(e.procs)
	e.mu.Unlock()
	p := &xproc{name: name, log: filepath.Join(e.logs, fmt.Sprintf("%02d-%s.log", n, name)), done: make(chan struct{}),
		deadline: testenv.WaitDeadline(e.t)}
	f, err := os.Create(p.log)
	require.NoError(e.t, err)
	p.cmd = exec.Command(e.bin, args...)
	p.cmd.Dir, p.cmd.Env, p.cmd.Stderr, p.cmd.Stdout = e.repo, e.env, f, f
	require.NoError(e.t, p.cmd.Start())
	go func() {
		p.err = p.cmd.Wait()
		f.Close()
		close(p.done)
	}()
	e.mu.Lock()
	e.procs = append(e.procs, p)
	e.mu.Unlock()
	return p
}

// daemon starts `mcp-scheduler daemon`.
func (e *xenv) daemon(name string) *xproc { return e.start(name, "daemon") }

func (p *xproc) pid() int { return p.cmd.Process.Pid }

func (p *xproc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// kill sends SIGKILL to the scheduler process alone (not its agents, which run in process
// groups of their own) and waits for it to be gone.
func (p *xproc) kill() {
	if !p.exited() {
		_ = p.cmd.Process.Signal(syscall.SIGKILL)
	}
	<-p.done
}

// stop sends SIGTERM and waits for a clean exit, until the test's waits end (then it kills
// the process); it reports the exit error.
func (p *xproc) stop() error {
	if p.exited() {
		return p.err
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	start := time.Now()
	select {
	case <-p.done:
		return p.err
	case <-time.After(time.Until(p.deadline)):
		p.kill()
		return fmt.Errorf("%s did not exit in the %v after SIGTERM that the test had left", p.name, time.Since(start).Round(time.Millisecond))
	}
}

func (p *xproc) logText() string {
	b, _ := os.ReadFile(p.log)
	return string(b)
}

// cleanup stops every process of the sandbox, kills what is left of agent process groups
// (a failing test must not leave agents running) and closes the database.
func (e *xenv) cleanup() {
	e.mu.Lock()
	procs := e.procs
	e.mu.Unlock()
	for _, p := range procs {
		p.kill()
	}
	for _, a := range e.agentRecords() {
		for _, pid := range testenv.GroupMembers(a.PGID) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		if a.ShimPID > 0 && testenv.SameProcess(a.ShimPID, a.ShimStart) {
			_ = syscall.Kill(a.ShimPID, syscall.SIGKILL)
		}
	}
	if e.t.Failed() {
		for _, p := range procs {
			e.t.Logf("--- log of %s (pid %d) ---\n%s", p.name, p.pid(), tailString(p.logText(), 6000))
		}
		e.t.Logf("--- missions ---\n%s--- history of main ---\n%s", e.dump(), e.history())
		e.keepSandbox()
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.st != nil {
		_ = e.st.Close()
		e.st, e.eng = nil, nil
	}
}

// history is main's commit graph with the files each commit touched, for a failing test.
func (e *xenv) history() string {
	cmd := exec.Command("git", "-C", e.repo, "log", "--graph", "--format=%h %s", "--name-status", "main")
	cmd.Env = e.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Sprintf("git log: %v: %s", err, out)
	}
	return string(out)
}

// EnvKeepSandbox names a directory where a failing test's sandbox (repository, data dir with
// the database and every attempt's files, process logs) is copied before t.TempDir is removed.
const EnvKeepSandbox = "MCP_SCHEDULER_E2E_KEEP"

func (e *xenv) keepSandbox() {
	dir := os.Getenv(EnvKeepSandbox)
	if dir == "" {
		return
	}
	dest := filepath.Join(dir, fmt.Sprintf("%s-%d", strings.ReplaceAll(e.t.Name(), "/", "_"), time.Now().UnixNano()))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		e.t.Logf("keep sandbox: %v", err)
		return
	}
	if out, err := exec.Command("cp", "-a", e.home, dest).CombinedOutput(); err != nil {
		e.t.Logf("keep sandbox: cp: %v: %s", err, out)
		return
	}
	e.t.Logf("sandbox kept in %s (%s)", dest, EnvKeepSandbox)
}

func tailString(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// waitUntil polls cond until it holds, failing with the sandbox's dump at the test binary's
// deadline; it returns how long it waited.
func (e *xenv) waitUntil(what string, cond func() bool) time.Duration {
	e.t.Helper()
	start := time.Now()
	testenv.WaitForState(e.t, what, cond, e.dump)
	return time.Since(start)
}

// missions lists every mission of the data dir.
func (e *xenv) missions() []domain.Mission {
	e.t.Helper()
	ms, err := e.engine().ListMissions(e.ctx, engine.MissionFilter{Limit: 1000})
	require.NoError(e.t, err)
	return ms
}

func (e *xenv) mission(id string) engine.MissionDetail {
	e.t.Helper()
	d, err := e.engine().GetMission(e.ctx, id)
	require.NoError(e.t, err)
	return d
}

func (e *xenv) voyage(id string) engine.VoyageDetail {
	e.t.Helper()
	d, err := e.engine().VoyageStatus(e.ctx, id)
	require.NoError(e.t, err)
	return d
}

// events returns the whole event log in sequence order.
func (e *xenv) events() []domain.Event {
	e.t.Helper()
	var out []domain.Event
	var after int64
	for {
		evs, err := e.engine().Events(e.ctx, engine.EventFilter{AfterSeq: after, Limit: 1000})
		require.NoError(e.t, err)
		out = append(out, evs...)
		if len(evs) < 1000 {
			return out
		}
		after = evs[len(evs)-1].Seq
	}
}

func (e *xenv) leader() engine.Leader {
	e.t.Helper()
	st, err := e.engine().Status(e.ctx)
	require.NoError(e.t, err)
	return st.Leader
}

// dump describes every mission, for a failing test.
func (e *xenv) dump() string {
	var b strings.Builder
	ms, _ := e.engine().ListMissions(e.ctx, engine.MissionFilter{Limit: 1000})
	for _, m := range ms {
		fmt.Fprintf(&b, "%s %-6s %-11s landing=%-12s attempt=%d epoch=%d kind=%s title=%q", m.ID, m.Key, m.State, m.Landing,
			m.Attempt, m.Lease.Epoch, m.Kind, m.Title)
		if m.LastFailure != nil {
			fmt.Fprintf(&b, " failure=%s: %s", m.LastFailure.Kind, m.LastFailure.Summary)
		}
		b.WriteString("\n")
	}
	if st, err := e.engine().Status(e.ctx); err == nil {
		fmt.Fprintf(&b, "leader: %+v\n", st.Leader)
	}
	return b.String()
}

// commitSubjects counts the commits reachable from main by subject.
func (e *xenv) commitSubjects() map[string]int {
	e.t.Helper()
	out := map[string]int{}
	for _, s := range strings.Split(e.git("log", "--format=%s", "main"), "\n") {
		out[s]++
	}
	return out
}

// file reads path at the tip of main.
func (e *xenv) file(path string) (string, bool) {
	cmd := exec.Command("git", "-C", e.repo, "show", "main:"+path)
	cmd.Env = e.env
	out, err := cmd.Output()
	return string(out), err == nil
}

// agentRecords reads the pid.json of every attempt the runner launched in the data dir.
func (e *xenv) agentRecords() map[string]runner.PIDRecord {
	out := map[string]runner.PIDRecord{}
	files, _ := filepath.Glob(filepath.Join(e.data, "attempts", "*", "a*", runner.FilePID))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		var rec runner.PIDRecord
		if json.Unmarshal(b, &rec) == nil && rec.PGID > 0 {
			out[filepath.Dir(f)] = rec
		}
	}
	return out
}

// leftovers lists the agent processes (members of an agent's process group) and shims of
// the data dir that still run, zombies excluded.
func (e *xenv) leftovers() []string {
	var out []string
	for dir, a := range e.agentRecords() {
		for _, pid := range testenv.GroupMembers(a.PGID) {
			out = append(out, fmt.Sprintf("pid %d in agent group %d (%s)", pid, a.PGID, dir))
		}
		if a.ShimPID > 0 && testenv.SameProcess(a.ShimPID, a.ShimStart) {
			out = append(out, fmt.Sprintf("shim %d (%s)", a.ShimPID, dir))
		}
	}
	return out
}

// jsonOf is a compact JSON rendering for messages.
func jsonOf(v any) string {
	var b bytes.Buffer
	_ = json.NewEncoder(&b).Encode(v)
	return strings.TrimSpace(b.String())
}

// waitNoStrays waits until no live process runs our binary (shims, warm shims, reference
// agents, servers) or was started in the data dir, other than the test's own: what must be
// gone once every scheduler of the sandbox stopped (a warm shim sees EOF and exits by itself).
func (e *xenv) waitNoStrays() {
	e.t.Helper()
	var left []string
	testenv.WaitForState(e.t, "no shim, agent or server process of the sandbox left", func() bool {
		left = e.strays()
		return len(left) == 0
	}, func() string { return strings.Join(left, "; ") })
}

// strays lists the live processes running our binary or started in the data dir, other than
// the test's own.
func (e *xenv) strays() []string {
	var out []string
	entries, _ := os.ReadDir("/proc")
	for _, en := range entries {
		pid, err := strconv.Atoi(en.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		if !testenv.SameProcess(pid, "") {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", en.Name(), "cmdline"))
		if err != nil {
			continue
		}
		cmdline := strings.ReplaceAll(strings.TrimRight(string(b), "\x00"), "\x00", " ")
		cwd, _ := os.Readlink(filepath.Join("/proc", en.Name(), "cwd"))
		if strings.HasPrefix(cmdline, e.bin) || strings.HasPrefix(cwd, e.data) {
			out = append(out, fmt.Sprintf("pid %d: %s (cwd %s)", pid, cmdline, cwd))
		}
	}
	return out
}

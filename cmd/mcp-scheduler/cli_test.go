package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/tools"

	"github.com/mcp-scheduler/mcp-scheduler/e2e/testenv"
)

func TestCLI_MissionLifecycle(t *testing.T) {
	s := newSandbox(t)
	m := cliJSON[domain.Mission](s, "go", "Fix the login test", "--brief", "it flakes", "--priority", "20", "--write-area", "auth/**")
	require.Equal(t, domain.StatePending, m.State)
	require.Equal(t, 20, m.Priority)
	require.Equal(t, s.repo, m.Repository, "the repository of the working directory")
	dep := cliJSON[domain.Mission](s, "go", "after it", "--depends-on", m.ID)

	out, _, code := s.cli("missions", "list")
	require.Equal(t, 0, code)
	require.Contains(t, out, "ID")
	require.Contains(t, out, m.ID)
	require.Contains(t, out, "Fix the login test")
	list := cliJSON[[]domain.Mission](s, "missions", "list", "--state", "pending", "--limit", "1")
	require.Len(t, list, 1)

	out, _, code = s.cli("missions", "show", dep.ID)
	require.Equal(t, 0, code)
	require.Contains(t, out, "waiting     hard_dependency")
	require.Contains(t, out, "depends on  "+m.ID)
	det := cliJSON[engine.MissionDetail](s, "missions", "show", dep.ID)
	require.NotEmpty(t, det.WhyNotRunning)

	c := cliJSON[domain.Mission](s, "missions", "cancel", m.ID, "--reason", "obsolete")
	require.Equal(t, domain.StateCancelled, c.State)
	require.Equal(t, domain.StateBlocked, cliJSON[engine.MissionDetail](s, "missions", "show", dep.ID).Mission.State,
		"its dependent is blocked")
	r := cliJSON[domain.Mission](s, "missions", "retry", m.ID)
	require.Equal(t, domain.StatePending, r.State)

	st := cliJSON[tools.StatusResult](s, "status")
	require.Equal(t, 2, st.Total)
	require.Equal(t, 2, st.Counts[domain.StatePending])
	out, _, _ = s.cli("status")
	require.Contains(t, out, "missions    2: pending 2")
	require.Contains(t, out, "loop        not running: nothing is launched or landed until `mcp-scheduler daemon`",
		"with no server, the table says the pending missions wait for one")
	require.Equal(t, map[string]int{engine.WhyNoLeader: 2}, st.Waiting, "status counts the waiting missions per reason")
	require.Contains(t, out, "waiting     2 no_leader")
	out, _, _ = s.cli("missions", "show", m.ID)
	require.Contains(t, out, "waiting     no_leader: no scheduler loop runs on this data dir")

	require.True(t, cliJSON[map[string]bool](s, "pause", "--reason", "lunch")["paused"])
	require.True(t, cliJSON[tools.StatusResult](s, "status").Paused)
	out, _, _ = s.cli("resume")
	require.Contains(t, out, "running")

	out, _, code = s.cli("events")
	require.Equal(t, 0, code)
	for _, typ := range []string{"mission.created", "mission.cancelled", "mission.retried", "scheduler.paused", "scheduler.resumed"} {
		require.Contains(t, out, typ)
	}
	out, _, _ = s.cli("events", "--mission", m.ID, "--type", "mission.cancelled", "--json")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 1)
	var ev domain.Event
	require.NoError(t, json.Unmarshal([]byte(lines[0]), &ev))
	require.Equal(t, "mission.cancelled", ev.Type)
	require.Equal(t, "cli", ev.Actor)
}

func TestCLI_ErrorsAndExitCodes(t *testing.T) {
	s := newSandbox(t)
	_, errs, code := s.cli("go")
	require.Equal(t, 2, code, "a usage mistake")
	require.Contains(t, errs, "missing TITLE (usage: mcp-scheduler go TITLE [flags])")
	_, errs, code = s.cli("go", "Fix", "the", "crash")
	require.Equal(t, 2, code)
	require.Contains(t, errs, "3 arguments given, want one TITLE — quote a value with spaces")
	_, errs, code = s.cli("missions", "show")
	require.Equal(t, 2, code)
	require.Contains(t, errs, "missing MISSION_ID")
	_, errs, code = s.cli("frobnicate")
	require.Equal(t, 2, code)
	require.Contains(t, errs, "unknown command")
	_, errs, code = s.cli("go", "x", "--priority", "nine")
	require.Equal(t, 2, code)
	require.Contains(t, errs, "priority")
	_, errs, code = s.cli("go", "x", "--priority", "0")
	require.Equal(t, 2, code, "0 would silently mean the default 100")
	require.Contains(t, errs, "1 (urgent) to 1000")
	_, errs, code = s.cli("go", "x", "--depends-on", "msn_01JD5Z8Q6X3V4W5Y6Z7A8B9C0D")
	require.Equal(t, 1, code)
	require.Contains(t, errs, "does not exist")
	_, errs, code = s.cli("missions", "show", "../../etc/passwd")
	require.Equal(t, 2, code, "a malformed argument is a usage mistake (refused before the data dir is opened)")
	require.Contains(t, errs, "not a mission id")
	_, errs, code = s.cli("go", "x", "--repo", t.TempDir())
	require.Equal(t, 2, code, "a --repo the server may not use is a bad flag value (usage, exit 2)")
	require.Contains(t, errs, "--repo: ")
	require.Contains(t, errs, "repository")
	_, errs, code = s.cli("missions", "frobnicate")
	require.Equal(t, 2, code)
	require.Contains(t, errs, `unknown command "frobnicate" for "mcp-scheduler missions"`)
	_, errs, code = s.cli("cleanup", "--older-than", "0s")
	require.Equal(t, 2, code, "0 would silently mean the 24 h default")
	require.Contains(t, errs, "positive duration")
	_, errs, code = s.cli("serve", "--transport", "carrier-pigeon")
	require.Equal(t, 2, code)
	require.Contains(t, errs, "stdio or http")
	bad := filepath.Join(s.home, "bad.toml")
	require.NoError(t, os.WriteFile(bad, []byte("[scheduler]\nlease_ttl = \"-1s\"\n"), 0o600))
	_, errs, code = s.cli("status", "--config", bad)
	require.Equal(t, 1, code, "a readable file with a bad value: the file is wrong, not the command line")
	require.Contains(t, errs, "scheduler.lease_ttl")
}

// The global flags' mistakes are usage mistakes (exit 2) naming the flag, and change nothing:
// a --log-level that is no level, a --config that names no readable file.
func TestCLI_GlobalFlagMistakesExit2(t *testing.T) {
	s := newSandbox(t)
	fresh := newSandbox(t)
	fresh.env = append(fresh.env, EnvDataDir+"="+filepath.Join(fresh.home, "never"))
	_, errs, code := fresh.cli("status", "--log-level", "loud")
	require.Equal(t, 2, code, errs)
	require.Contains(t, errs, `--log-level: "loud" is not debug, info, warn or error`)
	require.NoDirExists(t, filepath.Join(fresh.home, "never"), "a usage mistake creates no data dir")
	missing := filepath.Join(s.home, "nope.toml")
	for path, why := range map[string]string{missing: "no such file or directory", s.home: "is a directory"} {
		_, errs, code = fresh.cli("status", "--config", path)
		require.Equal(t, 2, code, errs)
		require.Contains(t, errs, "--config: cannot read "+path+": "+why)
		require.Contains(t, errs, "leave --config out to use ")
	}
	require.NoDirExists(t, filepath.Join(fresh.home, "never"))
	_, errs, code = s.cli("status", "--log-level", "warn")
	require.Equal(t, 0, code, errs)
}

// TestCLI_ConfiguredRepositories: a repository outside the working directory's is accepted
// once configured, and missions name it.
func TestCLI_ConfiguredRepositories(t *testing.T) {
	s := newSandbox(t)
	other := newSandbox(t)
	cfg := filepath.Join(s.home, "config", "mcp-scheduler", "config.toml")
	require.NoError(t, os.MkdirAll(filepath.Dir(cfg), 0o700))
	require.NoError(t, os.WriteFile(cfg, []byte("[[repositories]]\npath = \""+other.repo+"\"\nlanding = \"approval\"\n"), 0o600))
	sub := filepath.Join(other.repo, "sub")
	require.NoError(t, os.MkdirAll(sub, 0o755))
	m := cliJSON[domain.Mission](s, "go", "elsewhere", "--repo", sub)
	require.Equal(t, other.repo, m.Repository, "a path inside a repository names its top level")
}

func TestCLI_Doctor(t *testing.T) {
	s := newSandbox(t)
	checks := cliJSON[[]check](s, "doctor")
	names := map[string]check{}
	for _, c := range checks {
		names[c.Name] = c
		require.True(t, c.OK, "%s: %s", c.Name, c.Detail)
	}
	require.Contains(t, names, "git ≥ 2.38")
	// the resource readings the gate compares, each against its threshold (issue 11)
	for _, n := range []string{"resource load_per_cpu", "resource available_memory_mb", "resource free_disk_mb", "waiting missions"} {
		require.Contains(t, names, n)
	}
	require.Contains(t, names["resource load_per_cpu"].Detail, "1-minute load per CPU")
	require.Contains(t, names["resource available_memory_mb"].Detail, "threshold 512")
	require.Contains(t, names["default repository"].Detail, "git checkout at "+s.repo+": a workspace on main (")
	fi, err := os.Stat(s.dataDir)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o700), fi.Mode().Perm(), "the data dir is private")

	cfg := filepath.Join(s.home, "config", "mcp-scheduler", "config.toml")
	require.NoError(t, os.MkdirAll(filepath.Dir(cfg), 0o700))
	require.NoError(t, os.WriteFile(cfg, []byte(`[[profiles]]
name = "ghost"
runtime = "command"
command = ["no-such-agent-cli-xyz", "--run"]
[[profiles]]
name = "ref"
runtime = "ndjson"
command = ["{mcp_scheduler}", "reference-agent"]
`), 0o600))
	out, _, code := s.cli("doctor")
	require.Equal(t, 1, code, "a missing agent CLI fails the doctor")
	require.Regexp(t, `profile ghost \(command\)\s+FAIL`, out)
	require.Contains(t, out, "no-such-agent-cli-xyz not found")
	require.Contains(t, out, "profile ref (ndjson)")
}

// TestCLI_SharesTheDatabaseWithARunningServer: a mission created on the command line is
// seen by a running stdio server (another process on the same data dir) at once, through
// its tools.
func TestCLI_SharesTheDatabaseWithARunningServer(t *testing.T) {
	s := newSandbox(t)
	p := s.start(nil, "serve")
	p.send(initialize)
	parseRPC(t, p.next())
	m := cliJSON[domain.Mission](s, "go", "made on the command line")
	id := 2
	testenv.WaitFor(t, "the server to see the mission", func() bool {
		id++
		p.send(`{"jsonrpc":"2.0","id":` + itoa(id) + `,"method":"tools/call","params":{"name":"get_mission","arguments":{"mission_id":"` + m.ID + `"}}}`)
		r := parseRPC(t, p.next())
		return strings.Contains(string(r.Result), `"made on the command line"`)
	})
	p.send(`{"jsonrpc":"2.0","id":1000,"method":"tools/call","params":{"name":"cancel_mission","arguments":{"mission_id":"` + m.ID + `"}}}`)
	require.Contains(t, string(parseRPC(t, p.next()).Result), `"state":"cancelled"`)
	require.Equal(t, domain.StateCancelled, cliJSON[engine.MissionDetail](s, "missions", "show", m.ID).Mission.State)
	require.NoError(t, p.stdin.Close())
	require.Equal(t, 0, p.wait())
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// TestCLI_EventsFollow: `events --follow` prints events committed by another process as they
// come, and stops cleanly when interrupted.
func TestCLI_EventsFollow(t *testing.T) {
	s := newSandbox(t)
	s.cli("go", "before following")
	var out testenv.SyncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"events", "--follow", "--json"}, streams{in: strings.NewReader(""), out: &out, err: &out}, s.getenv)
	}()
	testenv.WaitFor(t, "the existing event", func() bool { return strings.Contains(out.String(), "before following") })
	cmd := exec.Command(binary, "go", "from another process")
	cmd.Dir, cmd.Env = s.repo, s.env
	b, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", b)
	testenv.WaitFor(t, "the other process's event", func() bool { return strings.Contains(out.String(), "from another process") })
	cancel()
	code, _ := testenv.Receive(t, "events --follow to stop", done)
	require.Equal(t, 0, code)
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var ev domain.Event
		require.NoError(t, json.Unmarshal([]byte(l), &ev), "one JSON event per line: %q", l)
	}
}

// What waits for a decision is visible and can be decided from the command line: a cancelled
// upstream blocks its dependent with an escalation that `escalations list` and `missions show`
// name, and `escalations resolve --action retry` reopens the dependent.
func TestCLI_Escalations(t *testing.T) {
	s := newSandbox(t)
	up := cliJSON[domain.Mission](s, "go", "upstream")
	dep := cliJSON[domain.Mission](s, "go", "dependent", "--depends-on", up.ID)
	cliJSON[domain.Mission](s, "missions", "cancel", up.ID, "--reason", "not needed")

	es := cliJSON[[]domain.Escalation](s, "escalations", "list", "--mission", dep.ID)
	require.Len(t, es, 1)
	require.Equal(t, domain.EscalationOpen, es[0].State)
	out, _, code := s.cli("escalations", "list")
	require.Equal(t, 0, code)
	require.Contains(t, out, es[0].ID)
	require.Contains(t, out, es[0].Kind)
	out, _, _ = s.cli("missions", "show", dep.ID)
	require.Contains(t, out, "escalation  "+es[0].ID+" ("+es[0].Kind)

	_, errs, code := s.cli("escalations", "resolve", es[0].ID, "--action", "shrug")
	require.Equal(t, 2, code, "a bad flag value is a usage mistake, like --limit 0 below")
	require.Contains(t, errs, "--action: ")
	require.Contains(t, errs, "use retry, skip, cancel or acknowledge")
	res := cliJSON[domain.Escalation](s, "escalations", "resolve", es[0].ID, "--action", "skip", "--note", "dropped")
	require.Equal(t, domain.EscalationResolved, res.State)
	require.Empty(t, cliJSON[[]domain.Escalation](s, "escalations", "list"))
	require.Len(t, cliJSON[[]domain.Escalation](s, "escalations", "list", "--all"), 1)
	require.Equal(t, domain.StateCancelled, cliJSON[engine.MissionDetail](s, "missions", "show", dep.ID).Mission.State)
	_, errs, code = s.cli("escalations", "list", "--limit", "0")
	require.Equal(t, 2, code)
	require.Contains(t, errs, "1 to 1000")
}

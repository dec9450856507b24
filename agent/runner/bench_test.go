package runner

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
	"github.com/mcp-scheduler/mcp-scheduler/agent/adapters"
	"github.com/mcp-scheduler/mcp-scheduler/agent/refagent"
)

const benchBrief = "@log info first\n@done"

// BenchmarkStartToFirstEvent measures the time from "start the agent" to "its first event
// is in our hands" for the reference agent, through the runner (shim, files, following)
// and, as the reference in the same run, through a plain os/exec start reading the agent's
// stdout pipe. It reports both and their ratio (goal: ≤ 1.5).
//
// Sub-benchmarks: warm (the default: a shim started ahead of time takes the launch) and cold
// (Config.NoWarmShim: every launch starts its shim first).
func BenchmarkStartToFirstEvent(b *testing.B) {
	for _, warm := range []bool{true, false} {
		name := map[bool]string{true: "warm", false: "cold"}[warm]
		b.Run(name, func(b *testing.B) { benchStartToFirstEvent(b, !warm) })
	}
}

func benchStartToFirstEvent(b *testing.B, noWarm bool) {
	r := newRunner(b, "", func(c *Config) { c.NoWarmShim = noWarm })
	ws := b.TempDir()
	var plain, runner []time.Duration
	i := 0
	for b.Loop() {
		i++
		plain = append(plain, plainStartToFirstEvent(b, ws))
		runner = append(runner, runnerStartToFirstEvent(b, r, ws, i))
	}
	// Medians: the machine is shared, and one descheduled run would swing a mean.
	pm, rm := median(plain), median(runner)
	b.ReportMetric(float64(pm.Microseconds())/1000, "exec-median-ms")
	b.ReportMetric(float64(rm.Microseconds())/1000, "runner-median-ms")
	b.ReportMetric(float64(rm)/float64(pm), "ratio")
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

func plainStartToFirstEvent(b *testing.B, ws string) time.Duration {
	start := agent.Start{Type: agent.TypeStart, Protocol: agent.Version, MissionID: "plain", Attempt: 1, Brief: benchBrief, Workspace: ws}
	line, err := json.Marshal(start)
	require.NoError(b, err)
	began := time.Now()
	cmd := exec.Command(self(b), refagent.Subcommand)
	cmd.Env = agent.EnvList(map[string]string{"PATH": os.Getenv("PATH"), "GORACE": "atexit_sleep_ms=0"})
	cmd.Dir = ws
	stdin, err := cmd.StdinPipe()
	require.NoError(b, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(b, err)
	require.NoError(b, cmd.Start())
	_, err = stdin.Write(append(line, '\n'))
	require.NoError(b, err)
	lr := agent.NewLineReader(stdout, 0)
	first, err := lr.Next()
	require.NoError(b, err)
	var m agent.Message
	require.NoError(b, json.Unmarshal(first, &m))
	took := time.Since(began)
	require.Equal(b, "first", m.Message)
	for {
		if _, err := lr.Next(); err != nil {
			break
		}
	}
	stdin.Close()
	require.NoError(b, cmd.Wait())
	return took
}

func runnerStartToFirstEvent(b *testing.B, r *Runner, ws string, i int) time.Duration {
	s := refSpec(b, r, fmt.Sprintf("bench-%d", i), ws, benchBrief)
	s.Request.BriefFile = filepath.Join(b.TempDir(), "brief.md")
	began := time.Now()
	p := launch(b, r, s)
	ev := <-p.Events()
	took := time.Since(began)
	require.Equal(b, "first", ev.Message.Message)
	_, out := collect(b, p)
	require.Equal(b, agent.StatusCompleted, out.Result.Status)
	return took
}

// BenchmarkReadDecodeNDJSON measures what the runner does per stdout line of an ndjson agent:
// the line reader, redaction of one secret and the ndjson adapter's decoder, on one goroutine
// (run with -cpu 1). Goal: ≥ 200,000 events/s.
func BenchmarkReadDecodeNDJSON(b *testing.B) {
	var buf bytes.Buffer
	lines := []string{
		`{"type":"agent.heartbeat"}`,
		`{"type":"task.progress","percent":42.5,"message":"running the tests"}`,
		`{"type":"task.log","level":"info","message":"wrote internal/http/health.go (1432 bytes)"}`,
		`{"type":"task.checkpoint","checkpoint":{"step":3,"note":"handlers done"},"message":"handlers done"}`,
	}
	n := 0
	for n < 10_000 {
		for _, l := range lines {
			buf.WriteString(l + "\n")
			n++
		}
	}
	data := buf.Bytes()
	redact := agent.NewRedactor([]string{"sk-test-0123456789abcdef"})
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	events := 0
	for b.Loop() {
		dec := adapters.NDJSON{}.NewDecoder()
		lr := agent.NewLineReader(bytes.NewReader(data), 0)
		for {
			line, err := lr.Next()
			if err != nil {
				break
			}
			msgs, err := dec.Line(redact.Bytes(line))
			if err != nil {
				b.Fatal(err)
			}
			events += len(msgs)
		}
	}
	if events%n != 0 {
		b.Fatalf("decoded %d events, not a multiple of %d", events, n)
	}
	b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
}

package adapters

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
)

// NDJSON is the adapter of runtime ndjson: the agent speaks our protocol as is. Its argv is the
// profile's command followed by extra_args, placeholders substituted per element; agent.start
// goes to its stdin (ProtocolStdin).
type NDJSON struct{}

// Invocation builds the argv, environment (allow-list + mission variables + set_env, nothing
// else) and working directory (the workspace) of one attempt.
func (NDJSON) Invocation(p agent.Profile, req agent.LaunchRequest) (agent.Invocation, error) {
	argv, env, err := commandArgv(p, req)
	if err != nil {
		return agent.Invocation{}, err
	}
	return agent.Invocation{Argv: argv, Env: env, Dir: req.Start.Workspace, ProtocolStdin: true}, nil
}

// NewDecoder returns the per-attempt decoder of our protocol.
func (NDJSON) NewDecoder() agent.Decoder { return &ndjsonDecoder{} }

// commandArgv is the argv and environment shared by runtimes ndjson and command.
func commandArgv(p agent.Profile, req agent.LaunchRequest) ([]string, map[string]string, error) {
	if len(p.Command) == 0 {
		return nil, nil, badProfile(p, "runtime %s needs a command (an argv list)", p.Runtime)
	}
	if err := checkModel(p, req); err != nil {
		return nil, nil, err
	}
	ph := newPlaceholders(p, req)
	argv, err := ph.expandAll(p, "command element", p.Command)
	if err != nil {
		return nil, nil, err
	}
	extra, err := ph.expandAll(p, "extra_args element", p.ExtraArgs)
	if err != nil {
		return nil, nil, err
	}
	env, err := baseEnv(p, req, ph)
	if err != nil {
		return nil, nil, err
	}
	return append(argv, extra...), env, nil
}

// errSecondResult is returned for a worker.result after the first: the first one stands.
var errSecondResult = errors.New("a second worker.result was ignored: the first one stands")

type ndjsonDecoder struct {
	result *agent.WorkerResult
	yield  *agent.Message
}

// Line decodes one protocol line. Known agent → scheduler types pass through (task.progress
// percent clamped to 0..100, unknown log levels read as info); unknown types are ignored. A
// worker.result that fails its schema becomes a failed result of kind protocol. A line with
// bytes that are not UTF-8 is a protocol error naming the field (never decoded with U+FFFD in
// their place); a worker.result such as that is a failed result of kind protocol too.
func (d *ndjsonDecoder) Line(line []byte) ([]agent.Message, error) {
	if err := agent.CheckJSONUTF8(line); err != nil {
		if probeType(line) == agent.TypeResult {
			return d.finish(protocolFailure(err.Error(), bytes.ToValidUTF8(line, []byte("\uFFFD")), nil))
		}
		return nil, fmt.Errorf("ndjson: protocol error: %w", err)
	}
	var m agent.Message
	if err := json.Unmarshal(line, &m); err != nil {
		if probeType(line) == agent.TypeResult {
			return d.finish(protocolFailure(fmt.Sprintf("it does not match the schema (%v)", err), line, nil))
		}
		return nil, fmt.Errorf("ndjson: not a protocol message: %w", err)
	}
	switch m.Type {
	case agent.TypeResult:
		if m.WorkerResult == nil {
			m.WorkerResult = &agent.WorkerResult{}
		}
		if err := validateResult(m.WorkerResult); err != nil {
			return d.finish(protocolFailure(err.Error(), line, m.WorkerResult))
		}
		return d.finish(*m.WorkerResult)
	case agent.TypeHeartbeat, agent.TypeProgress, agent.TypeLog, agent.TypeCheckpoint, agent.TypeYield:
		m.WorkerResult = nil
		normalize(&m)
		if m.Type == agent.TypeYield && d.yield == nil {
			y := m
			d.yield = &y
		}
		return []agent.Message{m}, nil
	case agent.TypeRateLimit:
		return rateLimitLine(m)
	case agent.TypeUsage:
		return usageLine(m)
	case "":
		return nil, errors.New(`ndjson: a JSON object without "type"`)
	}
	return nil, nil // an unknown type: ignored by design (agent newer than us)
}

// probeType is the "type" of a protocol line that may not match its schema, "" when unknown.
func probeType(line []byte) string {
	var probe struct {
		Type string `json:"type"`
	}
	if json.Unmarshal(line, &probe) != nil {
		return ""
	}
	return probe.Type
}

func (d *ndjsonDecoder) finish(r agent.WorkerResult) ([]agent.Message, error) {
	if d.result != nil {
		return nil, errSecondResult
	}
	d.result = &r
	return []agent.Message{resultMsg(r)}, nil
}

// End returns the reported result. Without one: an agent that yielded ends cancelled (the
// runner has already handed its task.yield to the engine, which interrupts the mission), any
// other ends as endWithoutResult says.
func (d *ndjsonDecoder) End(exit agent.ExitStatus) agent.WorkerResult {
	if d.result != nil {
		return *d.result
	}
	if d.yield != nil {
		reason := d.yield.Reason
		if reason == "" {
			reason = "no reason given"
		}
		return agent.WorkerResult{
			Status:  agent.StatusCancelled,
			Summary: fmt.Sprintf("agent yielded (%s) and ended without a worker.result (%s)", reason, describeExit(exit)),
		}
	}
	return endWithoutResult("agent", exit, apiTrouble{})
}

// normalize repairs the harmless ways a known message can be out of range.
func normalize(m *agent.Message) {
	if m.Percent != nil {
		v := *m.Percent
		switch {
		case math.IsNaN(v):
			m.Percent = nil
		case v < 0:
			v = 0
			m.Percent = &v
		case v > 100:
			v = 100
			m.Percent = &v
		}
	}
	if m.Type == agent.TypeLog {
		switch m.Level {
		case "debug", "info", "warn", "error":
		default:
			m.Level = "info"
		}
	}
}

// rateLimitLine passes a task.rate_limit on, or says what is wrong with it (a line not
// understood: logged and counted, never fatal).
func rateLimitLine(m agent.Message) ([]agent.Message, error) {
	if m.RateLimit == nil || !agent.KnownRateStatus(m.RateLimit.Status) {
		return nil, errors.New(`ndjson: task.rate_limit needs rate_limit.status "allowed", "allowed_warning" or "rejected"`)
	}
	if m.RateLimit.RetryAfterSeconds < 0 || math.IsNaN(m.RateLimit.RetryAfterSeconds) {
		return nil, errors.New("ndjson: task.rate_limit: rate_limit.retry_after_seconds must not be negative")
	}
	return []agent.Message{{Type: agent.TypeRateLimit, RateLimit: m.RateLimit}}, nil
}

package agent

import (
	"bytes"
	"encoding/json"
	"io"
	"testing"
)

// protocolStream is a typical stream of our protocol: heartbeats, progress, logs, a
// checkpoint and a result, with a blank line and a CRLF ending mixed in.
func protocolStream(lines int) ([]byte, int) {
	sample := []string{
		`{"type":"agent.heartbeat"}`,
		`{"type":"task.progress","percent":42.5,"message":"running the tests"}`,
		`{"type":"task.log","level":"info","message":"wrote internal/http/health.go (1432 bytes)"}`,
		`{"type":"task.log","level":"warn","message":"go vet: possible misuse of unsafe.Pointer"}` + "\r",
		``,
		`{"type":"task.checkpoint","checkpoint":{"step":3,"note":"handlers done"},"message":"handlers done"}`,
		`{"type":"worker.result","status":"completed","summary":"added GET /healthz","artifacts":["internal/http/health.go"],"usage":{"input_tokens":1200,"output_tokens":340,"cost_usd":0.0123}}`,
	}
	var buf bytes.Buffer
	n := 0
	for n < lines {
		for _, s := range sample {
			buf.WriteString(s)
			buf.WriteByte('\n')
			if s != "" {
				n++
			}
		}
	}
	return buf.Bytes(), n
}

// BenchmarkParseEvents measures the line reader plus decoding each line into a Message with
// encoding/json, on one goroutine (run with -cpu 1). Goal: ≥ 200,000 events/s.
func BenchmarkParseEvents(b *testing.B) {
	data, n := protocolStream(10_000)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	events := 0
	for b.Loop() {
		lr := NewLineReader(bytes.NewReader(data), 0)
		for {
			line, err := lr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			var m Message
			if err := json.Unmarshal(line, &m); err != nil {
				b.Fatal(err)
			}
			events++
		}
	}
	if events%n != 0 {
		b.Fatalf("read %d events, not a multiple of %d", events, n)
	}
	b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkLineReader measures the line reader alone, for comparison.
func BenchmarkLineReader(b *testing.B) {
	data, _ := protocolStream(10_000)
	b.SetBytes(int64(len(data)))
	lines := 0
	for b.Loop() {
		lr := NewLineReader(bytes.NewReader(data), 0)
		for {
			if _, err := lr.Next(); err != nil {
				break
			}
			lines++
		}
	}
	b.ReportMetric(float64(lines)/b.Elapsed().Seconds(), "lines/s")
}

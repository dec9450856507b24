package adapters_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
	"github.com/mcp-scheduler/mcp-scheduler/agent/adapters"
)

// corpus returns the non-blank lines of every transcript matching pattern in testdata, one
// slice per transcript.
func corpus(b *testing.B, pattern string) (streams [][][]byte, size int64) {
	b.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", pattern))
	if err != nil || len(files) == 0 {
		b.Fatalf("no transcripts match %s: %v", pattern, err)
	}
	for _, f := range files {
		body, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		var lines [][]byte
		for _, l := range bytes.Split(body, []byte("\n")) {
			if len(bytes.TrimSpace(l)) > 0 {
				lines = append(lines, l)
				size += int64(len(l)) + 1
			}
		}
		streams = append(streams, lines)
	}
	return streams, size
}

// ndjsonCorpus is a typical stream of our own protocol, the reference the CLI figures are
// compared with: heartbeats, progress, logs, a checkpoint and a result.
func ndjsonCorpus() (streams [][][]byte, size int64) {
	var lines [][]byte
	for _, l := range []string{
		`{"type":"agent.heartbeat"}`,
		`{"type":"task.progress","percent":10,"message":"reading the brief"}`,
		`{"type":"task.log","level":"info","message":"go test ./parser/... ok 0.412s"}`,
		`{"type":"task.progress","percent":60,"message":"writing parser_test.go"}`,
		`{"type":"task.checkpoint","message":"tests pass","checkpoint":{"step":3,"files":["parser.go","parser_test.go"]}}`,
		`{"type":"task.log","level":"warn","message":"vet: unused result of fmt.Sprintf in lexer.go:88"}`,
		`{"type":"worker.result","status":"completed","summary":"parser and tests","artifacts":["parser.go"],"usage":{"input_tokens":1200,"output_tokens":340,"cost_usd":0.02}}`,
	} {
		lines = append(lines, []byte(l))
		size += int64(len(l)) + 1
	}
	return [][][]byte{lines}, size
}

// BenchmarkDecode measures decoder throughput on one goroutine (run with -cpu 1 for one
// core) and reports lines/s: every transcript of each CLI, decoded with a fresh decoder per
// pass, and our own protocol as the reference.
func BenchmarkDecode(b *testing.B) {
	claude, claudeSize := corpus(b, "claude-*.ndjson")
	codex, codexSize := corpus(b, "codex-*.jsonl")
	ref, refSize := ndjsonCorpus()
	for _, bc := range []struct {
		name  string
		a     agent.Adapter
		lines [][][]byte
		size  int64
	}{
		{"claude-stream-json", adapters.NewClaudeCode(), claude, claudeSize},
		{"codex-json", adapters.Codex{}, codex, codexSize},
		{"ndjson-reference", adapters.NDJSON{}, ref, refSize},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(bc.size)
			b.ReportAllocs()
			n := 0
			for _, s := range bc.lines {
				n += len(s)
			}
			for b.Loop() {
				for _, stream := range bc.lines {
					dec := bc.a.NewDecoder()
					for _, l := range stream {
						if _, err := dec.Line(l); err != nil {
							b.Fatal(err)
						}
					}
					_ = dec.End(agent.ExitStatus{Known: true})
				}
			}
			b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "lines/s")
		})
	}
}

package agent

import (
	"bytes"
	"encoding/json"
	"io"
	"testing"
)

// BenchmarkCheckJSONUTF8 measures the UTF-8 check on valid protocol lines (what every MCP
// request and agent line pays) against decoding the same lines with encoding/json (what the
// decoders do next anyway), in the same run.
func BenchmarkCheckJSONUTF8(b *testing.B) {
	data, _ := protocolStream(10_000)
	lines := bytes.Split(data, []byte("\n"))
	b.Run("check", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			for _, l := range lines {
				if CheckJSONUTF8(l) != nil {
					b.Fatal("refused a valid line")
				}
			}
		}
	})
	b.Run("reference=json.Unmarshal", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			for _, l := range lines {
				var m Message
				_ = json.Unmarshal(l, &m)
			}
		}
	})
}

// BenchmarkRedactingWriter measures relaying an agent's output through the redactor in
// 4 KiB writes (what the shim does when a profile has secrets) against redacting each chunk
// on its own with Redactor.Bytes (what the runner does per line, blind to split secrets).
func BenchmarkRedactingWriter(b *testing.B) {
	data, _ := protocolStream(10_000)
	rd := NewRedactor([]string{"sk-ant-api03-0123456789abcdefghijklmnopqrstuvwxyz", "sk-proj-abcdefghijklmnop"})
	write := func(b *testing.B, w io.Writer) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			for off := 0; off < len(data); off += 4096 {
				if _, err := w.Write(data[off:min(off+4096, len(data))]); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	b.Run("redacting", func(b *testing.B) { write(b, NewRedactingWriter(io.Discard, rd)) })
	b.Run("reference=Redactor.Bytes", func(b *testing.B) {
		write(b, writerFunc(func(p []byte) (int, error) { return io.Discard.Write(rd.Bytes(p)) }))
	})
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

package agent

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

// FuzzLineReader feeds arbitrary bytes to the production LineReader, with a small cap so that
// cut lines are common, in one piece or (follow mode) in two pieces with an EOF between them,
// and compares what it returns with a model of the documented behaviour: the stream split at
// "\n", one trailing "\r" and a BOM at the very start removed, blank lines skipped, a line
// over the cap reported by a *LineTooLongError at its offset; Offset moves past each line.
//
//	go test -run '^$' -fuzz '^FuzzLineReader$' -fuzztime 10m ./agent/
func FuzzLineReader(f *testing.F) {
	f.Add([]byte("{\"type\":\"agent.heartbeat\"}\n{\"type\":\"task.progress\",\"percent\":50}\n"), uint16(8), uint16(0))
	f.Add([]byte("\xEF\xBB\xBF{\"a\":1}\r\n\r\n  \n{\"b\":2}"), uint16(4), uint16(5))
	f.Add([]byte("short\nthis line is longer than the cap\nok\n"), uint16(10), uint16(12))
	f.Fuzz(func(t *testing.T, data []byte, capSeed, cut uint16) {
		max := int(capSeed%512) + 1
		want := modelLines(data, max)
		var src io.Reader = bytes.NewReader(data)
		follow := cut != 0
		if follow {
			src = &pausingReader{parts: split(data, int(cut)%(len(data)+1))}
		}
		lr := NewLineReader(src, max)
		lr.SetFollow(follow)
		got := readModel(t, lr, len(data), follow)
		if len(got) != len(want) {
			t.Fatalf("cap %d: got %d lines/cuts %+v, want %d %+v", max, len(got), got, len(want), want)
		}
		for i := range want {
			checkModelLine(t, max, i, got[i], want[i])
		}
	})
}

// modelEntry is one line (or cut line) the reader must return: its text (stripped), the raw
// segment without "\n", and its offsets.
type modelEntry struct {
	line       []byte
	raw        []byte
	cut        bool
	size       int64
	start, end int64 // end: offset after the line (its newline included)
	offsetSeen int64 // Offset() after Next returned it (filled by readModel)
}

func modelLines(data []byte, max int) []modelEntry {
	var out []modelEntry
	start := 0
	for i := 0; start < len(data); i++ {
		nl := bytes.IndexByte(data[start:], '\n')
		end := len(data)
		if nl >= 0 {
			end = start + nl + 1
		}
		raw := bytes.TrimSuffix(data[start:end], []byte("\n"))
		line := bytes.TrimSuffix(raw, []byte("\r"))
		if i == 0 {
			line = bytes.TrimPrefix(line, bom)
		}
		switch {
		case len(line) > max:
			out = append(out, modelEntry{raw: raw, cut: true, size: int64(len(line)), start: int64(start), end: int64(end)})
		case len(bytes.TrimSpace(line)) > 0:
			out = append(out, modelEntry{line: line, raw: raw, start: int64(start), end: int64(end)})
		}
		start = end
	}
	return out
}

// readModel reads lr to the end (in follow mode: to the EOF between the pieces, on, then
// Finish), failing on any error other than a cut line and on more calls than the data allows
// (a reader that never reaches EOF).
func readModel(t *testing.T, lr *LineReader, n int, follow bool) []modelEntry {
	var got []modelEntry
	eofs := 0
	for calls := 0; ; calls++ {
		if calls > n+4 {
			t.Fatalf("no EOF after %d calls on %d bytes", calls, n)
		}
		line, err := lr.Next()
		var tl *LineTooLongError
		switch {
		case err == nil:
			got = append(got, modelEntry{line: bytes.Clone(line), offsetSeen: lr.Offset()})
		case errors.As(err, &tl):
			if !errors.Is(err, ErrLineTooLong) || tl.Error() == "" {
				t.Fatalf("a cut line's error is not ErrLineTooLong: %v", err)
			}
			got = append(got, modelEntry{cut: true, size: tl.Size, start: tl.Offset, raw: tl.Prefix, offsetSeen: lr.Offset()})
		case err == io.EOF:
			eofs++
			if !follow || eofs > 2 {
				return got
			}
			if eofs == 2 {
				lr.Finish()
			}
		default:
			t.Fatalf("unexpected error: %v", err)
		}
	}
}

func checkModelLine(t *testing.T, max, i int, got, want modelEntry) {
	t.Helper()
	if got.cut != want.cut {
		t.Fatalf("cap %d, entry %d: cut %v, want %v (want line %q at %d)", max, i, got.cut, want.cut, want.line, want.start)
	}
	if got.offsetSeen != want.end {
		t.Fatalf("cap %d, entry %d: Offset() %d after it, want %d", max, i, got.offsetSeen, want.end)
	}
	if !want.cut {
		if !bytes.Equal(got.line, want.line) {
			t.Fatalf("cap %d, entry %d: line %q, want %q", max, i, got.line, want.line)
		}
		return
	}
	// Size is the line's length without its newline; a trailing "\r" or the BOM may count.
	// The prefix holds what had arrived when the line went over the cap: at least the cap.
	if got.start != want.start || got.size < want.size || got.size > int64(len(want.raw)) {
		t.Fatalf("cap %d, entry %d: cut at %d size %d, want at %d size %d..%d", max, i, got.start, got.size, want.start, want.size, len(want.raw))
	}
	raw := want.raw
	if !bytes.HasPrefix(raw, got.raw) {
		raw = bytes.TrimPrefix(raw, bom) // the first line's prefix may be read without its BOM
	}
	if len(got.raw) > lineTooLongKeep || !bytes.HasPrefix(raw, got.raw) || len(got.raw) < min(len(raw), lineTooLongKeep, max) {
		t.Fatalf("cap %d, entry %d: prefix %q is not the line's first bytes (%q)", max, i, got.raw, want.raw)
	}
}

func split(data []byte, at int) [][]byte { return [][]byte{data[:at], data[at:]} }

// pausingReader returns its parts one after the other, with an io.EOF after each, as a file
// another process is still writing does.
type pausingReader struct {
	parts [][]byte
	atEnd bool
}

func (p *pausingReader) Read(b []byte) (int, error) {
	for len(p.parts) > 0 {
		if len(p.parts[0]) == 0 {
			p.parts = p.parts[1:]
			if !p.atEnd {
				p.atEnd = true
				return 0, io.EOF
			}
			continue
		}
		p.atEnd = false
		n := copy(b, p.parts[0])
		p.parts[0] = p.parts[0][n:]
		return n, nil
	}
	return 0, io.EOF
}

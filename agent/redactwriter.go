package agent

import (
	"bytes"
	"io"
)

// RedactingWriter writes what it is given to an underlying writer with every secret of a
// Redactor replaced by Redacted, including a secret split between two writes: it holds back
// the end of what it was given only while that end could be the start of a secret (so a line
// that ends in "\n" is written at once unless a secret holds newlines), and writes it with the
// next Write or at Flush. Use it from one goroutine at a time.
type RedactingWriter struct {
	w       io.Writer
	rd      *Redactor
	pending []byte
}

// NewRedactingWriter returns a RedactingWriter over w; with a Redactor that has nothing to
// redact it passes writes through unchanged.
func NewRedactingWriter(w io.Writer, rd *Redactor) *RedactingWriter {
	return &RedactingWriter{w: w, rd: rd}
}

// Write redacts and writes p, except the held-back end. It reports len(p) when the
// underlying write succeeded (the bytes written there differ in number).
func (x *RedactingWriter) Write(p []byte) (int, error) {
	if !x.rd.Active() {
		return x.w.Write(p)
	}
	buf := x.rd.Bytes(append(x.pending, p...))
	hold := x.rd.heldSuffix(buf)
	cut := len(buf) - hold
	if cut > 0 {
		if _, err := x.w.Write(buf[:cut]); err != nil {
			x.pending = append(x.pending[:0], buf[cut:]...)
			return 0, err
		}
	}
	x.pending = append(x.pending[:0], buf[cut:]...)
	return len(p), nil
}

// Flush writes what is held back: the stream ended, so it cannot become a secret any more.
func (x *RedactingWriter) Flush() error {
	if len(x.pending) == 0 {
		return nil
	}
	_, err := x.w.Write(x.pending)
	x.pending = x.pending[:0]
	return err
}

// heldSuffix is the length of the longest end of b that is a proper prefix of a secret: the
// bytes that must wait for more input before they can be written.
func (rd *Redactor) heldSuffix(b []byte) int {
	longest := 0
	for _, s := range rd.secret {
		for k := min(len(s)-1, len(b)); k > longest; k-- {
			if bytes.HasSuffix(b, s[:k]) {
				longest = k
				break
			}
		}
	}
	return longest
}

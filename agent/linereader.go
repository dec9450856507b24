package agent

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// DefaultMaxLine is the default cap on one NDJSON line: 16 MiB (design brief §7: "lines up to
// at least 16 MiB").
const DefaultMaxLine = 16 << 20

// readBufferSize is the bufio buffer: lines up to this size are returned without copying.
const readBufferSize = 64 << 10

// lineTooLongKeep is how many leading bytes of a cut line a LineTooLongError keeps, so the
// log can show what the line was.
const lineTooLongKeep = 256

var bom = []byte{0xEF, 0xBB, 0xBF}

// ErrLineTooLong is matched (errors.Is) by every *LineTooLongError.
var ErrLineTooLong = errors.New("line too long")

// LineTooLongError reports one line longer than the reader's cap. The line was cut: its bytes
// were discarded up to the next newline, and reading goes on from there. It is a per-line
// report, never fatal.
type LineTooLongError struct {
	Size   int64  // the line's full length in bytes, without the newline
	Limit  int    // the cap in force
	Prefix []byte // the first bytes of the line (at most 256), for the log
	Offset int64  // byte offset of the line's start in the stream
}

func (e *LineTooLongError) Error() string {
	return fmt.Sprintf("line at offset %d is %d bytes, over the %d-byte limit: cut", e.Offset, e.Size, e.Limit)
}

// Is makes errors.Is(err, ErrLineTooLong) true.
func (e *LineTooLongError) Is(target error) bool { return target == ErrLineTooLong }

// LineReader splits a byte stream into NDJSON lines: "\n" terminated, with no 64 KiB limit
// (bufio.Scanner's default ended other projects' sessions, bugs.md B23). It strips a UTF-8
// BOM at the start of the stream and a trailing "\r" (B24), and skips blank and
// whitespace-only lines. A line longer than the cap is cut: Next returns a *LineTooLongError
// for it and the following call resumes after its newline.
//
// In follow mode (SetFollow(true), for a file another process is still writing) an
// unterminated last line is held back at EOF and completed by later reads; Finish ends follow
// mode so the next Next returns that tail. Without follow mode the tail is returned at EOF.
//
// A LineReader is not safe for concurrent use.
type LineReader struct {
	r      *bufio.Reader
	max    int
	follow bool

	pending  []byte // an incomplete line held across EOF (follow mode) or a line over the buffer
	dropping bool   // discarding the rest of a line over the cap
	dropErr  *LineTooLongError

	started  bool  // the first line was returned (a BOM is stripped from it only)
	offset   int64 // bytes consumed through the end of the last complete line
	consumed int64 // bytes read from r so far
}

// NewLineReader returns a reader of r with the given cap on a line's length in bytes
// (max <= 0 means DefaultMaxLine).
func NewLineReader(r io.Reader, max int) *LineReader {
	if max <= 0 {
		max = DefaultMaxLine
	}
	return &LineReader{r: bufio.NewReaderSize(r, readBufferSize), max: max}
}

// SetFollow turns follow mode on or off (see LineReader).
func (lr *LineReader) SetFollow(on bool) { lr.follow = on }

// Finish ends follow mode: the stream is complete, so the next Next returns an unterminated
// tail as the last line.
func (lr *LineReader) Finish() { lr.follow = false }

// Offset returns the number of bytes of the stream consumed through the end (newline
// included) of the last line returned or skipped; bytes of a held-back tail are not counted.
// A reader created over the same stream positioned at this offset continues where this one
// stopped.
func (lr *LineReader) Offset() int64 { return lr.offset }

// Next returns the next non-blank line without its newline, trailing "\r" or a leading BOM.
// The slice is valid until the next call. At the end of the stream it returns io.EOF (in
// follow mode more data may arrive later: call Next again). A *LineTooLongError reports one
// cut line; other errors come from the underlying reader.
func (lr *LineReader) Next() ([]byte, error) {
	for {
		line, err := lr.readLine()
		if err != nil {
			return nil, err
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		return line, nil
	}
}

// readLine returns the next line, blank or not, with BOM and "\r" removed.
func (lr *LineReader) readLine() ([]byte, error) {
	for {
		chunk, err := lr.r.ReadSlice('\n')
		lr.consumed += int64(len(chunk))
		complete := err == nil
		switch {
		case lr.dropping:
			lr.dropErr.Size += int64(len(chunk))
			if complete {
				lr.dropErr.Size-- // the newline
				return nil, lr.endDropping()
			}
		case complete && len(lr.pending) == 0:
			return lr.emit(chunk)
		case len(lr.pending)+len(chunk) > lr.max+2+lr.bomRoom(): // +2: room for "\r\n"
			lr.startDropping(chunk, complete)
			if complete {
				return nil, lr.endDropping()
			}
		default:
			lr.pending = append(lr.pending, chunk...)
			if complete {
				line, lerr := lr.emit(lr.pending)
				lr.pending = lr.pending[:0]
				return line, lerr
			}
		}
		switch {
		case err == bufio.ErrBufferFull:
			continue
		case err == io.EOF:
			return lr.atEOF()
		default:
			return nil, err
		}
	}
}

// emit finishes one complete line (raw, with its newline if it had one): the offset moves
// past it, the end of line and a first-line BOM go, and a line over the cap is reported.
func (lr *LineReader) emit(raw []byte) ([]byte, error) {
	start := lr.offset
	lr.offset = lr.consumed
	line := trimEOL(raw)
	if !lr.started {
		lr.started = true
		line = bytes.TrimPrefix(line, bom)
	}
	if len(line) > lr.max {
		return nil, &LineTooLongError{Size: int64(len(line)), Limit: lr.max, Prefix: keepPrefix(line), Offset: start}
	}
	return line, nil
}

// bomRoom is the room a first line needs for a BOM, which does not count against the cap.
func (lr *LineReader) bomRoom() int {
	if lr.started {
		return 0
	}
	return len(bom)
}

// startDropping switches to discarding the current line, keeping its first bytes for the
// report.
func (lr *LineReader) startDropping(chunk []byte, complete bool) {
	if complete {
		chunk = chunk[:len(chunk)-1] // the newline is not part of the line (nor of its prefix)
	}
	head := append(lr.pending[:len(lr.pending):len(lr.pending)], chunk[:min(len(chunk), lineTooLongKeep)]...)
	size := int64(len(lr.pending) + len(chunk))
	lr.dropErr = &LineTooLongError{Size: size, Limit: lr.max, Prefix: keepPrefix(head), Offset: lr.offset}
	lr.dropping = true
	lr.started = true
	lr.pending = lr.pending[:0]
	if cap(lr.pending) > 4*readBufferSize {
		lr.pending = nil // do not keep a 16 MiB buffer around
	}
}

// endDropping ends a cut line and returns its report.
func (lr *LineReader) endDropping() error {
	e := lr.dropErr
	lr.dropping, lr.dropErr = false, nil
	lr.offset = lr.consumed
	return e
}

// atEOF handles the end of the data available now.
func (lr *LineReader) atEOF() ([]byte, error) {
	switch {
	case lr.follow || (len(lr.pending) == 0 && !lr.dropping):
		return nil, io.EOF
	case lr.dropping:
		return nil, lr.endDropping()
	}
	line, err := lr.emit(lr.pending)
	lr.pending = lr.pending[:0]
	return line, err
}

func trimEOL(b []byte) []byte {
	b = bytes.TrimSuffix(b, []byte("\n"))
	return bytes.TrimSuffix(b, []byte("\r"))
}

func keepPrefix(b []byte) []byte {
	return bytes.Clone(b[:min(len(b), lineTooLongKeep)])
}

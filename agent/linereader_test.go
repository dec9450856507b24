package agent

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// readAll collects every line and every cut-line report until EOF.
func readAll(t *testing.T, lr *LineReader) (lines []string, cut []*LineTooLongError) {
	t.Helper()
	for {
		line, err := lr.Next()
		var tl *LineTooLongError
		switch {
		case err == nil:
			lines = append(lines, string(line))
		case errors.As(err, &tl):
			cut = append(cut, tl)
		case err == io.EOF:
			return lines, cut
		default:
			t.Fatalf("Next: %v", err)
		}
	}
}

func TestB23_LineReaderLinesFarAbove64KiB(t *testing.T) {
	big := strings.Repeat("x", 5<<20)
	in := `{"a":1}` + "\n" + big + "\n" + `{"b":2}` + "\n"
	lines, cut := readAll(t, NewLineReader(strings.NewReader(in), 0))
	require.Empty(t, cut)
	require.Equal(t, []string{`{"a":1}`, big, `{"b":2}`}, lines)
}

func TestB23_LineReaderOverCapCutAndReadingResumes(t *testing.T) {
	in := "first\n" + strings.Repeat("y", 1000) + "\nafter\n" + strings.Repeat("z", 101) + "\r\nlast"
	lr := NewLineReader(strings.NewReader(in), 100)
	lines, cut := readAll(t, lr)
	require.Equal(t, []string{"first", "after", "last"}, lines)
	require.Len(t, cut, 2)
	require.ErrorIs(t, cut[0], ErrLineTooLong)
	require.EqualValues(t, 1000, cut[0].Size)
	require.EqualValues(t, 6, cut[0].Offset)
	require.Equal(t, 100, cut[0].Limit)
	require.Equal(t, strings.Repeat("y", 256), string(cut[0].Prefix[:256]))
	require.EqualValues(t, 101, cut[1].Size)
	require.EqualValues(t, len(in), lr.Offset())
}

func TestLineReader_OverCapWithinOneBuffer(t *testing.T) {
	// A line over a small cap that fits in bufio's buffer takes the fast path.
	lines, cut := readAll(t, NewLineReader(strings.NewReader("ok\n"+strings.Repeat("a", 50)+"\nok2\n"), 10))
	require.Equal(t, []string{"ok", "ok2"}, lines)
	require.Len(t, cut, 1)
	require.EqualValues(t, 50, cut[0].Size)
}

func TestLineReader_TwentyMiBLineCutUnderDefaultCap(t *testing.T) {
	in := bytes.Repeat([]byte("q"), 20<<20)
	in = append(in, "\n{\"type\":\"agent.heartbeat\"}\n"...)
	lines, cut := readAll(t, NewLineReader(bytes.NewReader(in), 0))
	require.Len(t, cut, 1)
	require.EqualValues(t, 20<<20, cut[0].Size)
	require.Equal(t, []string{`{"type":"agent.heartbeat"}`}, lines)
}

func TestB24_LineReaderBOMCRLFBlankLines(t *testing.T) {
	in := "\xEF\xBB\xBF{\"id\":1}\r\n{\"id\":2}\r\n\r\n   \t \n\nbanner, not json\r\n"
	lines, cut := readAll(t, NewLineReader(strings.NewReader(in), 0))
	require.Empty(t, cut)
	require.Equal(t, []string{`{"id":1}`, `{"id":2}`, "banner, not json"}, lines)
}

func TestLineReader_BOMOnlyOnFirstLine(t *testing.T) {
	in := "a\n\xEF\xBB\xBFb\n"
	lines, _ := readAll(t, NewLineReader(strings.NewReader(in), 0))
	require.Equal(t, []string{"a", "\xEF\xBB\xBFb"}, lines)
}

// slowWriter simulates a file that another process appends to in pieces.
type growingReader struct{ buf bytes.Buffer }

func (g *growingReader) Read(p []byte) (int, error) {
	if g.buf.Len() == 0 {
		return 0, io.EOF
	}
	return g.buf.Read(p)
}

func TestLineReader_FollowHoldsPartialLineAcrossEOF(t *testing.T) {
	src := &growingReader{}
	lr := NewLineReader(src, 0)
	lr.SetFollow(true)

	src.buf.WriteString("\xEF")
	_, err := lr.Next()
	require.ErrorIs(t, err, io.EOF)
	src.buf.WriteString("\xBB\xBF{\"type\":")
	_, err = lr.Next()
	require.ErrorIs(t, err, io.EOF)
	require.EqualValues(t, 0, lr.Offset())

	src.buf.WriteString("\"agent.heartbeat\"}\r\n{\"tail\"")
	line, err := lr.Next()
	require.NoError(t, err)
	require.Equal(t, `{"type":"agent.heartbeat"}`, string(line))
	require.EqualValues(t, 31, lr.Offset())
	_, err = lr.Next()
	require.ErrorIs(t, err, io.EOF)

	lr.Finish()
	line, err = lr.Next()
	require.NoError(t, err)
	require.Equal(t, `{"tail"`, string(line))
	_, err = lr.Next()
	require.ErrorIs(t, err, io.EOF)
}

func TestLineReader_FollowCutLineSpanningEOF(t *testing.T) {
	src := &growingReader{}
	lr := NewLineReader(src, 10)
	lr.SetFollow(true)
	src.buf.WriteString(strings.Repeat("a", 30))
	_, err := lr.Next()
	require.ErrorIs(t, err, io.EOF)
	src.buf.WriteString(strings.Repeat("b", 30) + "\nok\n")
	_, err = lr.Next()
	var tl *LineTooLongError
	require.ErrorAs(t, err, &tl)
	require.EqualValues(t, 60, tl.Size)
	line, err := lr.Next()
	require.NoError(t, err)
	require.Equal(t, "ok", string(line))
}

func TestLineReader_ReaderErrorsPassThrough(t *testing.T) {
	boom := errors.New("boom")
	lr := NewLineReader(io.MultiReader(strings.NewReader("a\npart"), iotestErr{boom}), 0)
	line, err := lr.Next()
	require.NoError(t, err)
	require.Equal(t, "a", string(line))
	_, err = lr.Next()
	require.ErrorIs(t, err, boom)
}

type iotestErr struct{ err error }

func (e iotestErr) Read([]byte) (int, error) { return 0, e.err }

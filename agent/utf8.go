package agent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// InvalidUTF8Error says where a JSON text holds bytes that are not UTF-8. JSON text must be
// UTF-8 (RFC 8259 §8.1), and Go's encoding/json would silently replace such bytes by U+FFFD,
// so they are refused before decoding, naming the field.
type InvalidUTF8Error struct {
	// Field is the path of the string that holds the bytes, in the JSON names of the text:
	// "params.arguments.title", "missions[2].brief"; "" when the bytes are outside any
	// string (the text is not JSON either).
	Field string
	// InKey is true when the bytes are in an object's key (Field is then the object's path
	// followed by the key as decoded, with U+FFFD in place of the bad bytes).
	InKey bool
	// Offset is the byte offset of the first bad byte in the text, Byte its value.
	Offset int64
	Byte   byte
	// Surrogate is true when the text is UTF-8 but a \u escape names half of a UTF-16
	// surrogate pair alone ("\ud800"), which no UTF-8 text can hold; Offset is the escape's.
	Surrogate bool
}

func (e *InvalidUTF8Error) Error() string {
	what := "is not valid UTF-8"
	if e.InKey {
		what = "is a key that is not valid UTF-8"
	}
	field := e.Field
	if field == "" {
		field = "the message"
	}
	if e.Surrogate {
		return fmt.Sprintf("%s: %s (a lone UTF-16 surrogate escape near offset %d); send text as UTF-8", field, what, e.Offset)
	}
	return fmt.Sprintf("%s: %s (byte 0x%02x at offset %d); send text as UTF-8", field, what, e.Byte, e.Offset)
}

// CheckJSONUTF8 returns an *InvalidUTF8Error when the JSON text b holds bytes that are not
// valid UTF-8, else nil. Valid text costs one pass of utf8.Valid; only invalid text is
// walked token by token to name the field. Syntax errors are not its business: text that is
// not JSON but is valid UTF-8 passes.
func CheckJSONUTF8(b []byte) error {
	if utf8.Valid(b) && !bytes.Contains(b, []byte(`\u`)) {
		return nil
	}
	w := utf8Walker{raw: b, dec: json.NewDecoder(bytes.NewReader(b))}
	w.dec.UseNumber()
	if err := w.walk(); err != nil {
		return err
	}
	if utf8.Valid(b) {
		return nil // escapes, all of them well formed
	}
	off := firstInvalid(b, 0)
	return &InvalidUTF8Error{Offset: off, Byte: b[off]}
}

// utf8Walker follows the tokens of a JSON text, keeping the path of the current value, and
// checks the raw bytes of every string token (the decoder's InputOffset delimits them: what
// lies between two tokens besides the string is ASCII).
type utf8Walker struct {
	raw   []byte
	dec   *json.Decoder
	stack []utf8Frame
	prev  int64
}

type utf8Frame struct {
	object   bool
	key      string
	wantKey  bool
	index    int
	hasValue bool
}

func (w *utf8Walker) walk() error {
	for {
		tok, err := w.dec.Token()
		if err != nil {
			return nil // the end, or not JSON: nothing more to name
		}
		end := w.dec.InputOffset()
		span := w.raw[w.prev:end]
		start := w.prev
		w.prev = end
		if d, ok := tok.(json.Delim); ok {
			w.delim(d)
			continue
		}
		isKey := len(w.stack) > 0 && w.stack[len(w.stack)-1].object && w.stack[len(w.stack)-1].wantKey
		if s, ok := tok.(string); ok {
			if err := w.checkString(s, span, start, isKey); err != nil {
				return err
			}
		}
		if isKey {
			f := &w.stack[len(w.stack)-1]
			f.key, f.wantKey = tok.(string), false
			continue
		}
		w.valueDone()
	}
}

// checkString refuses a string token whose raw bytes are not UTF-8, or whose escapes name a
// lone UTF-16 surrogate ("\ud800"): the decoder turned both into U+FFFD, which shows as more
// U+FFFD in the decoded string than the raw text spells (as bytes or as \ufffd).
func (w *utf8Walker) checkString(s string, span []byte, start int64, isKey bool) error {
	field := w.path("")
	if isKey {
		field = w.path(s)
	}
	if !utf8.Valid(span) {
		off := firstInvalid(w.raw, start)
		return &InvalidUTF8Error{Field: field, InKey: isKey, Offset: off, Byte: w.raw[off]}
	}
	lower := bytes.ToLower(span)
	spelled := bytes.Count(span, []byte(string(utf8.RuneError))) + bytes.Count(lower, []byte(`\ufffd`))
	if strings.Count(s, string(utf8.RuneError)) > spelled {
		i := bytes.Index(lower, []byte(`\ud`))
		return &InvalidUTF8Error{Field: field, InKey: isKey, Surrogate: true, Offset: start + int64(max(i, 0))}
	}
	return nil
}

// delim enters or leaves a container.
func (w *utf8Walker) delim(d json.Delim) {
	switch d {
	case '{', '[':
		w.stack = append(w.stack, utf8Frame{object: d == '{', wantKey: d == '{', index: -1})
		if d == '[' {
			w.stack[len(w.stack)-1].index = 0
		}
	default:
		w.stack = w.stack[:len(w.stack)-1]
		w.valueDone()
	}
}

// valueDone moves the enclosing container past the value just read.
func (w *utf8Walker) valueDone() {
	if len(w.stack) == 0 {
		return
	}
	f := &w.stack[len(w.stack)-1]
	if f.object {
		f.wantKey = true
	} else {
		f.index++
	}
}

// path renders the current position: keys joined by ".", array indexes in brackets, then
// extra (a key being read) when given.
func (w *utf8Walker) path(extra string) string {
	var sb strings.Builder
	for _, f := range w.stack {
		switch {
		case f.object && !f.wantKey:
			if sb.Len() > 0 {
				sb.WriteByte('.')
			}
			sb.WriteString(f.key)
		case !f.object:
			sb.WriteString("[" + strconv.Itoa(f.index) + "]")
		}
	}
	if extra != "" {
		if sb.Len() > 0 {
			sb.WriteByte('.')
		}
		sb.WriteString(extra)
	}
	return sb.String()
}

// firstInvalid is the offset of the first byte at or after from that starts no valid UTF-8
// sequence.
func firstInvalid(b []byte, from int64) int64 {
	for i := from; i < int64(len(b)); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += int64(n)
	}
	return from
}

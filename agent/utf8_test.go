package agent_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
)

func TestCheckJSONUTF8_NamesTheField(t *testing.T) {
	cases := map[string]struct {
		field string
		inKey bool
		off   int64
	}{
		`{"a":"x` + "\xff" + `"}`: {"a", false, 7},
		`{"params":{"arguments":{"title":"ok","brief":"b` + "\xc3" + `"}}}`:      {"params.arguments.brief", false, 47},
		`{"missions":[{"t":"a"},{"t":"b","caps":["go","r` + "\xe2\x82" + `"]}]}`: {"missions[1].caps[1]", false, 47},
		`{"a":{"k` + "\xfe" + `":1}}`:                                            {"a.k\ufffd", true, 8},
		`["ok",{"x":[1,2,{"y":"` + "\x80" + `"}]}]`:                              {"[1].x[2].y", false, 22},
		`"` + "\xff" + `"`: {"", false, 1},
	}
	for text, want := range cases {
		err := agent.CheckJSONUTF8([]byte(text))
		var ue *agent.InvalidUTF8Error
		require.ErrorAs(t, err, &ue, "%q", text)
		require.Equal(t, want.field, ue.Field, "%q", text)
		require.Equal(t, want.inKey, ue.InKey, "%q", text)
		require.Equal(t, want.off, ue.Offset, "%q", text)
		require.Equal(t, text[want.off], ue.Byte)
		require.Contains(t, err.Error(), "send text as UTF-8")
	}
}

func TestCheckJSONUTF8_ValidTextAndEscapesPass(t *testing.T) {
	for _, ok := range []string{`{}`, `{"a":"héllo ✓ 🚀"}`, `{"a":"\u00ff\ud83d\ude80"}`, `[1,"x",null,{"k":[true]}]`, `not json at all`} {
		require.NoError(t, agent.CheckJSONUTF8([]byte(ok)), ok)
	}
}

func TestCheckJSONUTF8_BadBytesOutsideStrings(t *testing.T) {
	err := agent.CheckJSONUTF8([]byte("{\"a\":1}\xff"))
	var ue *agent.InvalidUTF8Error
	require.ErrorAs(t, err, &ue)
	require.Empty(t, ue.Field)
	require.Equal(t, int64(7), ue.Offset)
	require.Contains(t, err.Error(), "the message: is not valid UTF-8 (byte 0xff at offset 7)")
}

// A lone surrogate escape is decoded to U+FFFD by encoding/json just like an invalid byte:
// refused too; a real U+FFFD (as bytes or escaped) and surrogate pairs pass.
func TestCheckJSONUTF8_LoneSurrogateEscape(t *testing.T) {
	for _, text := range []string{`{"a":{"title":"x\ud800y"}}`, `{"a":{"title":"\uDFFF"}}`, `{"a":{"title":"\ufffd and \ud83d"}}`} {
		err := agent.CheckJSONUTF8([]byte(text))
		var ue *agent.InvalidUTF8Error
		require.ErrorAs(t, err, &ue, text)
		require.True(t, ue.Surrogate, text)
		require.Equal(t, "a.title", ue.Field, text)
		require.Contains(t, err.Error(), "a.title: is not valid UTF-8 (a lone UTF-16 surrogate escape near offset")
	}
	for _, ok := range []string{`{"a":"\ufffd"}`, `{"a":"\uFFFD�"}`, `{"a":"\ud83d\ude80 \u00e9"}`, `{"\u0041":"\u0042"}`} {
		require.NoError(t, agent.CheckJSONUTF8([]byte(ok)), ok)
	}
}

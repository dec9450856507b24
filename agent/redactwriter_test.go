package agent_test

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
)

// Whatever the write boundaries, no secret reaches the underlying writer and everything else
// does, byte for byte.
func TestRedactingWriter_SecretsSplitAcrossWrites(t *testing.T) {
	secrets := []string{"sk-ant-api03-SECRETSECRET", "ghp_abcabcabd", "aaab"}
	rd := agent.NewRedactor(secrets)
	text := "key=sk-ant-api03-SECRETSECRET\nghp_abcabcabcabd and sk-ant-api03-SECRETSECRE (cut) aaaab\nend: sk-ant-api03-SECRETSECRET"
	want := rd.String(text)
	require.NotContains(t, want, "SECRETSECRET\n")
	rng := rand.New(rand.NewPCG(1, 2))
	for range 500 {
		var out bytes.Buffer
		w := agent.NewRedactingWriter(&out, rd)
		for rest := text; rest != ""; {
			n := 1 + rng.IntN(min(len(rest), 9))
			_, err := w.Write([]byte(rest[:n]))
			require.NoError(t, err)
			rest = rest[n:]
		}
		require.NoError(t, w.Flush())
		require.Equal(t, want, out.String())
		for _, s := range secrets {
			require.NotContains(t, out.String(), s)
		}
	}
}

// A complete line is written at once: only an end that could start a secret waits.
func TestRedactingWriter_HoldsBackOnlyAPossibleSecretStart(t *testing.T) {
	var out bytes.Buffer
	w := agent.NewRedactingWriter(&out, agent.NewRedactor([]string{"sk-live-123456"}))
	_, err := w.Write([]byte(`{"type":"task.heartbeat"}` + "\n"))
	require.NoError(t, err)
	require.Equal(t, `{"type":"task.heartbeat"}`+"\n", out.String())
	_, err = w.Write([]byte("token sk-li"))
	require.NoError(t, err)
	require.Equal(t, `{"type":"task.heartbeat"}`+"\ntoken ", out.String())
	_, err = w.Write([]byte("ve-123456!"))
	require.NoError(t, err)
	require.True(t, strings.HasSuffix(out.String(), "token "+agent.Redacted+"!"), out.String())

	var plain bytes.Buffer
	pw := agent.NewRedactingWriter(&plain, agent.NewRedactor(nil))
	_, err = pw.Write([]byte("no secrets"))
	require.NoError(t, err)
	require.Equal(t, "no secrets", plain.String())
}

package runner

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
	"github.com/mcp-scheduler/mcp-scheduler/agent/adapters"
)

// A real child prints the profile's secret to stdout and stderr, whole and split across two
// writes with a pause between them: the attempt's files on disk never hold it, and every
// other byte is there.
func TestSecrets_RedactedBeforeOutputReachesDisk(t *testing.T) {
	const secret = "sk-test-0123456789abcdef" // 24 bytes: halves of 12
	t.Setenv("REF_API_KEY", secret)
	r := newRunner(t, "")
	dir, err := r.AttemptDir("disk", 1)
	require.NoError(t, err)
	script := `k="$REF_API_KEY"
printf 'whole %s end\n' "$k"
printf 'split %s' "${k%????????????}"; sleep 0.2; printf '%s end\n' "${k#????????????}"
printf 'err %s' "${k%????????????}" >&2; sleep 0.2; printf '%s end\n' "${k#????????????}" >&2
printf 'last line without newline %s' "$k"`
	s := Spec{
		Adapter:    adapters.Command{},
		AttemptDir: dir,
		Profile: agent.Profile{Name: "sh", Runtime: agent.RuntimeCommand, Command: []string{"sh", "-c", script},
			Env: []string{"PATH"}, SecretEnv: []string{"REF_API_KEY"}},
		Request: agent.LaunchRequest{Start: agent.Start{MissionID: "disk", Attempt: 1, Epoch: 1, Title: "t", Brief: "b", Workspace: t.TempDir()}},
	}
	_, out := collect(t, launch(t, r, s))
	require.Equal(t, 0, out.Exit.Code)

	stdout, err := os.ReadFile(filepath.Join(dir, FileStdout))
	require.NoError(t, err)
	stderr, err := os.ReadFile(filepath.Join(dir, FileStderr))
	require.NoError(t, err)
	red := agent.Redacted
	require.Equal(t, "whole "+red+" end\nsplit "+red+" end\nlast line without newline "+red, string(stdout))
	require.Equal(t, "err "+red+" end\n", string(stderr))
	for _, f := range []string{FileStdout, FileStderr, FileShimLog, FilePID, FileExit} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err == nil {
			require.False(t, strings.Contains(string(b), secret[:12]+secret[12:]), "%s holds the secret", f)
		}
	}
}

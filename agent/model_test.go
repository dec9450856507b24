package agent_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
)

func TestCheckModel_AcceptsProviderIDs(t *testing.T) {
	for _, ok := range []string{"claude-opus-4-8", "gpt-5.5", "sonnet[1m]", "us.anthropic.claude-3-7-sonnet-20250219-v1:0",
		"claude-sonnet-4-5@20250929", "openrouter/anthropic/claude-3.5", "llama3:8b", "o3+x", "M", strings.Repeat("m", agent.MaxModelLen)} {
		require.NoError(t, agent.CheckModel(ok), ok)
	}
}

func TestCheckModel_RefusesOptionsControlsAndJunk(t *testing.T) {
	for bad, says := range map[string]string{
		"":                                       "is empty",
		"-x":                                     `starts with "-"`,
		"--dangerously-skip-permissions":         `starts with "-"`,
		"gpt\n--yolo":                            "control character",
		"a\x00b":                                 "control character",
		"m\x7f":                                  "control character",
		"m\u0085":                                "control character",
		"gpt\xff":                                "not valid UTF-8",
		strings.Repeat("m", agent.MaxModelLen+1): "over the limit of 128",
		"gpt 5":                                  "is not a model name",
		"$(rm -rf /)":                            "is not a model name",
		"/abs":                                   "is not a model name",
		"modèle":                                 "is not a model name",
	} {
		err := agent.CheckModel(bad)
		require.Error(t, err, "%q", bad)
		require.Contains(t, err.Error(), says, "%q", bad)
		require.Contains(t, err.Error(), "use the provider's model id", "%q: says what to send", bad)
	}
}

func TestProfileValidate_NamesTheBadModel(t *testing.T) {
	p := agent.Profile{Name: "p", Runtime: agent.RuntimeClaudeCode, Models: []string{"claude-opus-4-8", "-p"}}
	err := p.Validate()
	require.ErrorContains(t, err, `profile p: models[1]: "-p" starts with "-"`)
}

package main

import (
	"bytes"
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestDemo_RunsToCompletion runs the README's first command on the built binary: the sample
// voyage completes, every mission lands and the history is printed. How long it takes is
// logged, not asserted (a loaded machine makes it slower, not wrong); the context bounds it.
func TestDemo_RunsToCompletion(t *testing.T) {
	s := newSandbox(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out, errb bytes.Buffer
	cmd := exec.CommandContext(ctx, binary, "demo")
	cmd.Env, cmd.Dir, cmd.Stdout, cmd.Stderr = s.env, s.repo, &out, &errb
	start := time.Now()
	require.NoError(t, cmd.Run(), "stdout:\n%s\nstderr:\n%s", out.String(), errb.String())
	took := time.Since(start)
	text := out.String()
	require.Contains(t, text, "Voyage completed: 7 missions")
	require.Contains(t, text, "Landed history of main:")
	require.Contains(t, text, "Watch it live from another terminal: mcp-scheduler --data-dir ", "the demo says how to watch it")
	for _, key := range []string{"outline", "getting-started", "configuration", "glossary", "readme-usage", "readme-links"} {
		require.Contains(t, text, key+" ", key)
	}
	require.Contains(t, text, "configuration    failed (retry)", "the flaky mission is retried")
	require.Contains(t, text, "review of glossary", "the review runs before the glossary lands")
	require.Contains(t, text, "waits (hard_dependency)", "the demo says why missions wait")
	require.Equal(t, 6, strings.Count(text, "landed on main"))
	t.Logf("demo took %s", took)
}

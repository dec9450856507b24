package main

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/storage/teststore"
)

// `nodes` lists the nodes the store knows, live or not; `nodes forget` removes one that
// will not come back (a node that ran once for a test, a host retired), so that status stops
// listing it as not running. A live node, or one never seen, is refused saying why.
func TestNodes_ForgetOnlyANodeThatWillNotComeBack(t *testing.T) {
	s := newSandbox(t)
	_, _, code := s.cli("status")
	require.Equal(t, 0, code)
	ctx := context.Background()
	st := teststore.OpenAt(t, filepath.Join(s.dataDir, "mcp-scheduler.db"))
	past := engine.New(st, engine.Options{Clock: engine.NewFakeClock(time.Now().Add(-time.Hour))})
	_, err := past.NodeLease(ctx, engine.NodeTake{Name: "retired", Owner: "old-host:1:ab", TTL: time.Minute})
	require.NoError(t, err)
	_, err = engine.New(st, engine.Options{}).NodeLease(ctx, engine.NodeTake{Name: "n1", Owner: "host:2:cd", TTL: 10 * time.Minute})
	require.NoError(t, err)

	out, errs, code := s.cli("nodes")
	require.Equal(t, 0, code, errs)
	require.Regexp(t, `(?m)^n1\s+live\s+host:2:cd\s`, out)
	require.Regexp(t, `(?m)^retired\s+not running\s+old-host:1:ab\s.*expired `, out)
	out, _, _ = s.cli("status")
	require.Contains(t, out, "not running: retired")

	_, errs, code = s.cli("nodes", "forget", "n1")
	require.NotEqual(t, 0, code)
	require.Contains(t, errs, "node: n1 is running (its lease, held by host:2:cd, expires at")
	require.Contains(t, errs, "stop that node first")
	_, errs, code = s.cli("nodes", "forget", "nosuch")
	require.NotEqual(t, 0, code)
	require.Contains(t, errs, "node nosuch not found (list them with mcp-scheduler nodes)")

	out, errs, code = s.cli("nodes", "forget", "retired")
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "node retired forgotten")
	out, _, _ = s.cli("status")
	require.NotContains(t, out, "retired")
	out, _, _ = s.cli("nodes")
	require.NotContains(t, out, "retired")
	require.Contains(t, out, "n1")
}

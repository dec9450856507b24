package scheduler_test

import (
	"encoding/json"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/scheduler"
)

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

func itoa(n int) string { return strconv.Itoa(n) }

func runRecord(t testing.TB, m engine.Mission) scheduler.RunRecord {
	t.Helper()
	var rec scheduler.RunRecord
	require.NoError(t, json.Unmarshal(m.Run, &rec))
	return rec
}

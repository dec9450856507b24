package scheduler_test

import (
	"encoding/json"
	"strconv"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine/scheduler"
)

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

func itoa(n int) string { return strconv.Itoa(n) }

// runRecord reads a mission's run record with its current attempt's workspace record.
func (h *harness) runRecord(id string) scheduler.RunRecord {
	h.t.Helper()
	m := h.mission(id)
	var rec scheduler.RunRecord
	require.NoError(h.t, json.Unmarshal(m.Run, &rec))
	ws, err := h.s.Workspace(h.ctx, &m)
	require.NoError(h.t, err)
	rec.Worktree = ws
	return rec
}

package storage

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A fresh database logs one info line for its migration run ("migrated database from schema
// 0 to N") and one debug line per step; reopening it at the newest schema logs none.
func TestMigrate_LogsOneInfoLinePerRun(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := t.TempDir() + "/log.db"
	open := func() []map[string]string {
		var buf bytes.Buffer
		log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
		s, err := Open(ctx, path, Options{Logger: log})
		require.NoError(t, err)
		require.NoError(t, s.Close())
		var recs []map[string]string
		for l := range strings.Lines(buf.String()) {
			if strings.Contains(l, "migrat") {
				recs = append(recs, map[string]string{"line": l, "info": fmt.Sprint(strings.Contains(l, "level=INFO")),
					"debug": fmt.Sprint(strings.Contains(l, "level=DEBUG"))})
			}
		}
		return recs
	}
	var infos, debugs []string
	for _, r := range open() {
		switch {
		case r["info"] == "true":
			infos = append(infos, r["line"])
		case r["debug"] == "true":
			debugs = append(debugs, r["line"])
		}
	}
	require.Len(t, infos, 1, "one info line for the run: %v", infos)
	require.Contains(t, infos[0], fmt.Sprintf(`msg="migrated database from schema 0 to %d"`, SchemaVersion()))
	require.Len(t, debugs, SchemaVersion(), "one debug line per step")
	require.Empty(t, open(), "a database at the newest schema migrates nothing and says nothing")
}

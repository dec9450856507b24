package worktree

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestValidateBranchName_AcceptsOrdinaryNames(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"main", "master", "feature/login-form", "release/v1.2.3", "user@host",
		"fix_123", "日本語/ブランチ", "a.b", "mcp-scheduler/m-1/a2", "UPPER/lower", strings.Repeat("x", 255)} {
		require.NoError(t, ValidateBranchName(name), name)
		require.NoError(t, ValidateRevision(name), name)
	}
	require.ErrorIs(t, ValidateBranchName(strings.Repeat("x", 256)), ErrInvalidRef)
	require.ErrorIs(t, ValidateBranchName("bad\xff"), ErrInvalidRef)
	require.NoError(t, ValidateRevision("0123abcd"))
	require.ErrorIs(t, ValidateRevision("HEAD~2"), ErrInvalidRef)
}

func TestValidateMissionIDAndAttempt(t *testing.T) {
	t.Parallel()
	for _, id := range []string{"a", "M-1", "mission_42", strings.Repeat("z", 64), "-f"} {
		require.NoError(t, ValidateMissionID(id), id)
	}
	for _, n := range []int{0, -1, MaxAttempt + 1} {
		require.ErrorIs(t, ValidateAttempt(n), ErrInvalidAttempt)
	}
	require.Equal(t, "mcp-scheduler/m/a7", AttemptBranch("m", 7))
}

func TestNewManager_RejectsBadConfiguration(t *testing.T) {
	t.Parallel()
	for _, cfg := range []Config{
		{},
		{DataDir: t.TempDir(), WarmPool: -1},
		{DataDir: t.TempDir(), WarmPool: MaxWarmPool + 1},
		{DataDir: t.TempDir(), CopyIgnored: []string{"a/[b"}},
		{DataDir: t.TempDir(), CopyIgnored: []string{"../outside/.env"}},
		{DataDir: t.TempDir(), CopyIgnored: []string{"/etc/passwd"}},
		{DataDir: t.TempDir(), Author: Signature{Name: "evil\nName"}},
		{DataDir: t.TempDir(), Author: Signature{Email: "<x>"}},
	} {
		_, err := NewManager(cfg)
		require.Error(t, err, "%+v", cfg)
	}
	m := newTestManager(t, func(c *Config) { c.DataDir = filepath.Join(t.TempDir(), "rel", "..", "data") })
	cfg := m.Config()
	require.True(t, filepath.IsAbs(cfg.DataDir))
	require.Equal(t, DefaultAuthorName, cfg.Author.Name)
	require.Equal(t, DefaultRetention, cfg.Retention)
	require.NoError(t, m.Close())
	_, err := m.Open(t.TempDir())
	require.ErrorIs(t, err, ErrClosed)
}

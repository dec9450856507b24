package agent

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestBuildEnv_AllowListOnly(t *testing.T) {
	parent := []string{
		"PATH=/usr/bin", "HOME=/home/dev", "CLAUDECODE=1", "ANTHROPIC_BASE_URL=http://main-agent",
		"API_KEY=sk-secret-1234", "UNLISTED=x", "BROKEN",
	}
	p := Profile{
		Env:       []string{"PATH", "HOME", "NOT_SET"},
		SetEnv:    map[string]string{"FIXED": "yes", "HOME": "/tmp/agent-home"},
		SecretEnv: []string{"API_KEY", "MISSING_KEY"},
	}
	vars := map[string]string{
		"MISSION_VAR": "v", "PATH": "/evil", "LD_PRELOAD": "/x.so", "DYLD_INSERT_LIBRARIES": "y",
		"bad name": "z", "API_KEY": "override",
	}
	env, secrets := BuildEnv(p, parent, vars)
	require.Equal(t, map[string]string{
		"PATH": "/usr/bin", "HOME": "/tmp/agent-home", "FIXED": "yes", "API_KEY": "sk-secret-1234",
		"MISSION_VAR": "v",
	}, env)
	require.Equal(t, []string{"sk-secret-1234"}, secrets)
	require.Equal(t, []string{"API_KEY=sk-secret-1234", "FIXED=yes", "HOME=/tmp/agent-home", "MISSION_VAR=v", "PATH=/usr/bin"}, EnvList(env))
	require.Equal(t, []string{"sk-secret-1234"}, SecretValues(p, env))
}

func TestCheckMissionVar(t *testing.T) {
	require.NoError(t, CheckMissionVar("GOFLAGS"))
	require.NoError(t, CheckMissionVar("_x1"))
	for _, bad := range []string{"", "1A", "A-B", "A=B", "ld_preload", "LD_LIBRARY_PATH", "DYLD_X", "A B"} {
		require.Error(t, CheckMissionVar(bad), bad)
	}
}

func TestRedactor(t *testing.T) {
	rd := NewRedactor([]string{"sk-abc", "sk-abcdef", "abc", ""})
	require.True(t, rd.Active())
	require.Equal(t, 9, rd.MaxLen())
	require.Equal(t, "key=[REDACTED] other=[REDACTED] abc", rd.String("key=sk-abcdef other=sk-abc abc"))
	in := []byte("nothing here")
	require.Same(t, &in[0], &rd.Bytes(in)[0])
	require.Equal(t, "x [REDACTED]", string(rd.Bytes([]byte("x sk-abc"))))

	var none *Redactor
	require.False(t, none.Active())
	require.Equal(t, "sk-abc", none.String("sk-abc"))
	require.Equal(t, "sk-abc", NewRedactor(nil).String("sk-abc"))
}

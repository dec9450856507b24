package main

import (
	"os/exec"
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/require"
)

// --version is a flag of the root command (it was an unknown flag) and prints what the version
// command prints, from one source, before any configuration is read (a broken one does not
// stop it).
func TestCLI_VersionFlag(t *testing.T) {
	s := newSandbox(t)
	sub, errs, code := s.cli("version")
	require.Equal(t, 0, code, errs)
	require.Equal(t, "mcp-scheduler "+buildVersion()+"\n", sub)
	for _, flag := range []string{"--version", "-v"} {
		out, errs, code := s.cli(flag)
		require.Equal(t, 0, code, errs)
		require.Equal(t, sub, out, flag)
	}
	writeSandboxConfig(t, s, "[scheduler]\nticks = 1\n")
	out, errs, code := s.cli("--version")
	require.Equal(t, 0, code, errs)
	require.Equal(t, sub, out)

	built, err := exec.Command(binary, "--version").Output()
	require.NoError(t, err)
	line, err := exec.Command(binary, "version").Output()
	require.NoError(t, err)
	require.Equal(t, string(line), string(built), "the built binary too")
}

// The version is the module's from the build info: a tag or the pseudo-version go build
// stamps (which holds the commit), else "dev" with the vcs revision when one was recorded.
func TestModuleVersion(t *testing.T) {
	t.Parallel()
	info := func(v string, settings ...debug.BuildSetting) *debug.BuildInfo {
		return &debug.BuildInfo{Main: debug.Module{Path: modulePath, Version: v}, Settings: settings}
	}
	rev := debug.BuildSetting{Key: "vcs.revision", Value: "ed2a6a0a65aff4c0982b0a5574a135f9e7e98888"}
	dirty := debug.BuildSetting{Key: "vcs.modified", Value: "true"}
	clean := debug.BuildSetting{Key: "vcs.modified", Value: "false"}
	for want, bi := range map[string]*debug.BuildInfo{
		"v1.2.3": info("v1.2.3", rev),
		"v0.0.0-20261207182656-ed2a6a0a65af+dirty": info("v0.0.0-20261207182656-ed2a6a0a65af+dirty", rev, dirty),
		"dev+ed2a6a0a65af.dirty":                   info("(devel)", rev, dirty),
		"dev+ed2a6a0a65af":                         info("(devel)", clean, rev),
		"dev":                                      info("(devel)"),
	} {
		require.Equal(t, want, moduleVersion(bi, true))
	}
	require.Equal(t, "dev", moduleVersion(nil, false))
}

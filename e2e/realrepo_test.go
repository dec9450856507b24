package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/e2e/testenv"
	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// A real repository (issue 7, e2e 5): go-git's own source, which is in the module cache
// because we depend on it, copied into a fresh git repository; a voyage dispatched over MCP
// (the Go client of mcp-go, stdio) to the built binary with the reference agent. The
// repository's check `go build <25 packages>` runs offline (GOPROXY=off, the module cache) on every
// merged tree before it lands. One mission breaks the build: its landing fails the check,
// and the repair mission the scheduler creates fixes it.

// goGitSource copies go-git's module directory into dir (writable) and returns the module's
// version.
func goGitSource(t *testing.T, dir string) string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-json", "github.com/go-git/go-git/v5").Output()
	require.NoError(t, err, "go list -m github.com/go-git/go-git/v5 (run from the repository)")
	var mod struct{ Path, Version, Dir string }
	require.NoError(t, json.Unmarshal(out, &mod))
	require.DirExists(t, mod.Dir, "go-git is in the module cache (go mod download)")
	err = filepath.WalkDir(mod.Dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(mod.Dir, p)
		if err != nil {
			return err
		}
		dst := filepath.Join(dir, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o644)
	})
	require.NoError(t, err)
	return mod.Version
}

// checkedPackages are what the check builds: go-git's packages whose dependencies are in the
// module cache of every machine that ran `go mod download` for this repository (as .ci/run
// does), about half of go-git (25 packages: plumbing, its formats and hashes, utils). The rest
// (transport, storage, the root package) needs modules at versions only go-git's own module
// graph selects, which an offline build cannot fetch.
var checkedPackages = []string{"./plumbing/", "./plumbing/hash/...", "./plumbing/format/...", "./plumbing/storer/...", "./utils/..."}

// realRepoMissions: four that change go-git (a new file, an edit of an existing file, a new
// package that needs another mission's work first, the README) and one that breaks the build
// and scripts its repairer's fix.
func realRepoMissions() []map[string]any {
	m := func(key, title, brief string, area ...string) map[string]any {
		return map[string]any{"key": key, "title": title, "brief": brief, "write_area": area}
	}
	missions := []map[string]any{
		m("sum", "binary: add SumBytes", "Add SumBytes to utils/binary.\n"+
			`@write utils/binary/sum.go "package binary\n\n// SumBytes adds up the bytes of b.\nfunc SumBytes(b []byte) int {\n\tn := 0\n\tfor _, c := range b {\n\t\tn += int(c)\n\t}\n\treturn n\n}\n"`+"\n"+
			"@commit binary: add SumBytes\n@done added SumBytes", "utils/binary/sum.go"),
		m("hash", "hash: add IsZeroHex", "Add IsZeroHex to plumbing/hash/hash.go.\n"+
			`@append plumbing/hash/hash.go "\n// IsZeroHex reports whether s is a non-empty string of zeros.\nfunc IsZeroHex(s string) bool {\n\tfor _, c := range s {\n\t\tif c != '0' {\n\t\t\treturn false\n\t\t}\n\t}\n\treturn s != \"\"\n}\n"`+"\n"+
			"@commit hash: add IsZeroHex\n@done added IsZeroHex", "plumbing/hash/hash.go"),
		m("user", "utils/checksum: use SumBytes", "A package that uses SumBytes (needs the sum mission).\n"+
			`@write utils/checksum/checksum.go "package checksum\n\nimport \"github.com/go-git/go-git/v5/utils/binary\"\n\n// Of is binary.SumBytes of s.\nfunc Of(s string) int { return binary.SumBytes([]byte(s)) }\n"`+"\n"+
			"@commit utils/checksum: use SumBytes\n@done added checksum", "utils/checksum/**"),
		m("readme", "README: a note", "Add a section to the README.\n"+
			`@append README.md "\n## Changed by mcp-scheduler\n\nThis copy was changed by an end-to-end test.\n"`+"\n"+
			"@commit README: a note\n@done noted", "README.md"),
		m("breaker", "hash: add Broken (does not compile)", "Add Broken to plumbing/hash.\n"+
			`@write plumbing/hash/broken.go "package hash\n\n// Broken returns a name that does not exist.\nfunc Broken() int { return undefinedName }\n"`+"\n"+
			"@commit hash: add Broken\n@done added Broken\n"+
			`@repair write plumbing/hash/broken.go "package hash\n\n// Broken returns 42.\nfunc Broken() int { return 42 }\n"`+"\n"+
			"@repair commit hash: Broken compiles\n@repair done fixed the build", "plumbing/hash/broken.go"),
	}
	missions[2]["depends_on"] = []string{"sum"}
	return missions
}

// TestRealRepo_GoGitVoyageLandsWithBuildCheckAndRepair: every mission lands on main after
// `go build` of checkedPackages passed on its merged tree; the breaking mission's landing fails that check
// (the failure names the undefined identifier), a repair mission fixes it and lands, and the
// final main builds.
func TestRealRepo_GoGitVoyageLandsWithBuildCheckAndRepair(t *testing.T) {
	goBin := testenv.LookPath(t, "go")
	root := privateTempDir(t)
	repo, data := filepath.Join(root, "go-git"), filepath.Join(root, "data")
	version := goGitSource(t, repo)
	gitRun(t, repo, "init", "-q", "-b", "main")
	gitRun(t, repo, "add", "-A")
	gitRun(t, repo, "commit", "-q", "-m", "go-git "+version+" from the module cache")
	files := strings.Count(gitRun(t, repo, "ls-files"), "\n") + 1

	cfg := filepath.Join(root, "config.toml")
	writeTOML(t, cfg, map[string]any{
		"log_level": "debug", "scheduler": map[string]any{"tick": "250ms", "max_concurrency": 4},
		"repositories": []map[string]any{{"path": repo, "checks": [][]string{append([]string{goBin, "build"}, checkedPackages...)}}},
		"profiles": []map[string]any{{"name": "reference", "runtime": "ndjson", "command": []string{"{mcp_scheduler}", "reference-agent"},
			"env":             []string{"PATH", "HOME", "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "GIT_CONFIG_NOSYSTEM"},
			"max_concurrency": 4}},
	})
	env := append(testenv.GitEnv(), "PATH="+os.Getenv("PATH"), "HOME="+root, "NO_COLOR=1",
		"MCP_SCHEDULER_CONFIG="+cfg, "MCP_SCHEDULER_DATA_DIR="+data,
		// The check builds offline from the module cache of this machine.
		"GOPROXY=off", "GOFLAGS=-mod=readonly", "GOTOOLCHAIN=local", "GOCACHE="+goEnv(t, "GOCACHE"), "GOMODCACHE="+goEnv(t, "GOMODCACHE"))

	ctx, cancel := context.WithTimeout(context.Background(), WorkTimeout(t))
	defer cancel()
	serverLog := filepath.Join(root, "server.stderr")
	c := startStdioClient(t, ctx, repo, env, serverLog)
	start := time.Now()
	d := callTool(t, ctx, c, "dispatch", map[string]any{"title": "go-git changes", "missions": realRepoMissions()})
	var dispatched struct {
		Voyage struct{ ID string }
		IDs    map[string]string
	}
	require.NoError(t, json.Unmarshal(d, &dispatched), "%s", d)
	var state string
	testenv.WaitForState(t, "the voyage to settle", func() bool {
		var vs struct{ Voyage struct{ State string } }
		require.NoError(t, json.Unmarshal(callTool(t, ctx, c, "voyage_status", map[string]any{"voyage_id": dispatched.Voyage.ID}), &vs))
		state = vs.Voyage.State
		return state != "" && state != "open" && state != "active"
	}, func() string {
		st, closeDB := openStore(t, data)
		defer closeDB()
		log, _ := os.ReadFile(serverLog)
		return fmt.Sprintf("state %q\n%s\nserver log:\n%s", state,
			dumpMissions(context.Background(), engine.New(st, engine.Options{})), tail(string(log), 20000))
	})
	wall := time.Since(start)
	require.NoError(t, c.Close()) // stdin closed: the server stops

	st, closeDB := openStore(t, data)
	defer closeDB()
	eng := engine.New(st, engine.Options{})
	bg := context.Background()
	require.Equal(t, "completed", state, dumpMissions(bg, eng))

	// The breaking mission: its landing failed the check, naming the compile error; a repair
	// mission landed its work with the fix, which carried the original as landed.
	brk, err := eng.GetMission(bg, dispatched.IDs["breaker"])
	require.NoError(t, err)
	require.Equal(t, domain.LandingLanded, brk.Mission.Landing)
	require.Len(t, brk.Landings, 1, "one landing of its attempt: checks failed, then the repair carried it")
	require.Equal(t, "checks_failed", brk.Landings[0].Status)
	require.Contains(t, brk.Landings[0].Detail, "undefined: undefinedName")
	require.Contains(t, brk.Landings[0].Detail, "build ./plumbing/")
	repairs, err := eng.ListMissions(bg, engine.MissionFilter{Kind: domain.KindRepair, Limit: 10})
	require.NoError(t, err)
	require.Len(t, repairs, 1, dumpMissions(bg, eng))
	require.Equal(t, brk.Mission.ID, repairs[0].SubjectID)
	require.Equal(t, domain.StateCompleted, repairs[0].State)
	require.Equal(t, domain.LandingLanded, repairs[0].Landing)
	require.Contains(t, repairs[0].Brief, "undefined: undefinedName", "the repairer is told what failed")
	body, ok := showFile(t, repo, "main", "plumbing/hash/broken.go")
	require.True(t, ok)
	require.Contains(t, body, "return 42")

	// Every other mission landed at its first try, each change once on main.
	for key, id := range dispatched.IDs {
		m, err := eng.GetMission(bg, id)
		require.NoError(t, err)
		require.Equal(t, domain.StateCompleted, m.Mission.State, key)
		require.Equal(t, domain.LandingLanded, m.Mission.Landing, key)
		if key != "breaker" {
			require.Len(t, m.Landings, 1, key)
			require.Equal(t, "landed", m.Landings[0].Status, key)
		}
	}
	sum, _ := showFile(t, repo, "main", "utils/binary/sum.go")
	require.Contains(t, sum, "func SumBytes")
	hash, _ := showFile(t, repo, "main", "plumbing/hash/hash.go")
	require.Equal(t, 1, strings.Count(hash, "func IsZeroHex"))
	readme, _ := showFile(t, repo, "main", "README.md")
	require.Equal(t, 1, strings.Count(readme, "## Changed by mcp-scheduler"))
	_, ok = showFile(t, repo, "main", "utils/checksum/checksum.go")
	require.True(t, ok)
	require.Empty(t, gitRun(t, repo, "status", "--porcelain"), "main's checkout followed every landing")

	// The checkout of main builds, the new package included.
	build := exec.Command(goBin, append([]string{"build"}, checkedPackages...)...)
	build.Dir, build.Env = repo, env
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)

	v, err := eng.VoyageStatus(bg, dispatched.Voyage.ID)
	require.NoError(t, err)
	serverLogText, err := os.ReadFile(serverLog)
	require.NoError(t, err)
	if p := os.Getenv("E2E_SERVER_LOG"); p != "" {
		require.NoError(t, os.WriteFile(p, serverLogText, 0o600))
	}
	logTimings(t, fmt.Sprintf("go-git %s (%d files), reference agent, go build check (25 packages)", version, files), voyageWall(v.Voyage),
		collectTimings(t, bg, eng, data, dispatched.Voyage.ID), ", client wall "+ms2(wall)+landingSummary(string(serverLogText)))
}

// startStdioClient starts `mcp-scheduler serve` in dir over stdio with env and initialises
// an mcp-go client.
func startStdioClient(t *testing.T, ctx context.Context, dir string, env []string, stderrFile string) *client.Client {
	t.Helper()
	errf, err := os.Create(stderrFile)
	require.NoError(t, err)
	t.Cleanup(func() { errf.Close() })
	tr := transport.NewStdioWithOptions(binary, env, []string{"serve"}, transport.WithCommandFunc(
		func(ctx context.Context, command string, env []string, args []string) (*exec.Cmd, error) {
			cmd := exec.CommandContext(ctx, command, args...)
			cmd.Env, cmd.Dir, cmd.Stderr = env, dir, errf
			return cmd, nil
		}))
	c := client.NewClient(tr)
	require.NoError(t, c.Start(ctx))
	t.Cleanup(func() { _ = c.Close() }) // the server stops when its stdin closes (again is harmless)
	var ir mcp.InitializeRequest
	ir.Params.ClientInfo = mcp.Implementation{Name: "e2e-realrepo", Version: "0"}
	_, err = c.Initialize(ctx, ir)
	require.NoError(t, err)
	return c
}

// callTool calls a tool and returns its structured result as JSON, failing on a tool error.
func callTool(t *testing.T, ctx context.Context, c *client.Client, name string, args map[string]any) []byte {
	t.Helper()
	var req mcp.CallToolRequest
	req.Params.Name, req.Params.Arguments = name, args
	res, err := c.CallTool(ctx, req)
	require.NoError(t, err, name)
	require.False(t, res.IsError, "%s: %v", name, res.Content)
	b, err := json.Marshal(res.StructuredContent)
	require.NoError(t, err)
	return b
}

func goEnv(t *testing.T, name string) string {
	t.Helper()
	out, err := exec.Command("go", "env", name).Output()
	require.NoError(t, err)
	return strings.TrimSpace(string(out))
}

func writeTOML(t *testing.T, path string, v any) {
	t.Helper()
	f, err := os.Create(path)
	require.NoError(t, err)
	require.NoError(t, toml.NewEncoder(f).Encode(v))
	require.NoError(t, f.Close())
}

var landingLogRe = regexp.MustCompile(`INF landing .*status=(\S+) .*duration_s=([0-9.]+)`)

// landingSummary sums the landings the server logged (each runs the checks on its merged
// tree, one at a time per branch): "; 6 landings (checks_failed 1, landed 5) took 17.2 s".
func landingSummary(log string) string {
	var total float64
	counts := map[string]int{}
	n := 0
	for _, m := range landingLogRe.FindAllStringSubmatch(log, -1) {
		d, err := strconv.ParseFloat(m[2], 64)
		if err != nil {
			continue
		}
		total += d
		counts[m[1]]++
		n++
	}
	var parts []string
	for k, c := range counts {
		parts = append(parts, fmt.Sprintf("%s %d", k, c))
	}
	sort.Strings(parts)
	return fmt.Sprintf("; %d landings (%s) took %.1f s in all, %.1f s each", n, strings.Join(parts, ", "), total, total/float64(max(n, 1)))
}

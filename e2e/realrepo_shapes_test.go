package e2e

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/e2e/testenv"
	"github.com/mcp-scheduler/mcp-scheduler/engine"
)

// Repository shapes (issue 29, docs/workspaces.md "Git LFS" and "Submodules"): the built
// binary serves over stdio in a real repository of that shape, the reference agent works one
// mission, and what lands on main, what the workspace held and what get_mission says are
// checked.

// shapeMission is one mission's outcome as get_mission tells a caller.
type shapeMission struct {
	Mission struct {
		ID, State, Landing string
		Attempt            int
	}
	Attempts []struct{ Outcome string }
	Landings []struct {
		Status       string   `json:"status"`
		ChangedFiles []string `json:"changed_files"`
	}
	Workspaces []struct {
		Path  string   `json:"path"`
		Notes []string `json:"notes"`
	}
}

// runShapeMission serves repo with env (PATH and the rest), dispatches one mission whose
// brief is the reference agent's script, waits for it to settle and returns get_mission's
// answer and the server's log.
func runShapeMission(t *testing.T, repo, data string, path string, brief string) (shapeMission, string) {
	t.Helper()
	root := filepath.Dir(data)
	cfg := filepath.Join(root, "config.toml")
	writeTOML(t, cfg, map[string]any{
		"log_level": "debug", "scheduler": map[string]any{"tick": "250ms"},
		"repositories": []map[string]any{{"path": repo}},
		"profiles": []map[string]any{{"name": "reference", "runtime": "ndjson", "command": []string{"{mcp_scheduler}", "reference-agent"},
			"env": []string{"PATH", "HOME", "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "GIT_CONFIG_NOSYSTEM"}}},
	})
	env := append(testenv.GitEnv(), "PATH="+path, "HOME="+root, "NO_COLOR=1",
		"MCP_SCHEDULER_CONFIG="+cfg, "MCP_SCHEDULER_DATA_DIR="+data)
	ctx, cancel := context.WithTimeout(context.Background(), WorkTimeout(t))
	defer cancel()
	serverLog := filepath.Join(root, "server.stderr")
	c := startStdioClient(t, ctx, repo, env, serverLog)
	d := callTool(t, ctx, c, "dispatch", map[string]any{"title": "shape", "missions": []map[string]any{
		{"key": "m", "title": "add a.txt", "brief": brief, "write_area": []string{"a.txt"}}}})
	var dispatched struct {
		Voyage struct{ ID string }
		IDs    map[string]string
	}
	require.NoError(t, json.Unmarshal(d, &dispatched), "%s", d)
	var got shapeMission
	testenv.WaitForState(t, "the mission to land or fail", func() bool {
		require.NoError(t, json.Unmarshal(callTool(t, ctx, c, "get_mission", map[string]any{"mission_id": dispatched.IDs["m"]}), &got))
		settled := got.Mission.State == "completed" && got.Mission.Landing != "none" &&
			got.Mission.Landing != "pending" && got.Mission.Landing != "approved"
		return settled || got.Mission.State == "failed" || got.Mission.State == "blocked" || got.Mission.Attempt > 1
	}, func() string {
		st, closeDB := openStore(t, data)
		defer closeDB()
		log, _ := os.ReadFile(serverLog)
		return fmt.Sprintf("%+v\n%s\nserver log:\n%s", got, dumpMissions(context.Background(), engine.New(st, engine.Options{})), tail(string(log), 20000))
	})
	require.NoError(t, c.Close())
	log, err := os.ReadFile(serverLog)
	require.NoError(t, err)
	return got, string(log)
}

// requireLandedOnce: completed at its first attempt, one landing, landed.
func requireLandedOnce(t *testing.T, got shapeMission, log string) {
	t.Helper()
	require.Equal(t, "completed", got.Mission.State, "%+v\n%s", got, tail(log, 8000))
	require.Equal(t, "landed", got.Mission.Landing, "%+v", got)
	require.Equal(t, 1, got.Mission.Attempt, "no retry")
	require.Len(t, got.Landings, 1)
	require.Equal(t, "landed", got.Landings[0].Status)
	require.Equal(t, []string{"a.txt"}, got.Landings[0].ChangedFiles)
	require.Len(t, got.Workspaces, 1)
}

const addAText = "Add a.txt.\n@write a.txt \"a\\n\"\n@commit add a.txt\n@done added a.txt"

// lfsPointerText is a Git LFS pointer.
func lfsPointerText(oid string, size int) string {
	return "version https://git-lfs.github.com/spec/v1\noid sha256:" + oid + "\nsize " + strconv.Itoa(size) + "\n"
}

// TestRealRepo_LFSWithoutGitLFSKeepsPointersAndLands is bug case B65 as written: a committed
// pointer big.bin, `*.bin filter=lfs diff=lfs merge=lfs -text`, filter.lfs.required=true,
// filter.lfs.process "git-lfs filter-process", and a daemon whose PATH has git but not
// git-lfs. The mission lands a.txt at its first attempt, big.bin is byte-identical on main
// and in the checkout, get_mission and the brief say the LFS files are pointers, and git's
// raw "git-lfs filter-process: … not found" appears nowhere. On main before this change the
// attempt failed at `git worktree add` with exactly that message.
func TestRealRepo_LFSWithoutGitLFSKeepsPointersAndLands(t *testing.T) {
	root := privateTempDir(t)
	repo, data := filepath.Join(root, "repo"), filepath.Join(root, "data")
	require.NoError(t, os.MkdirAll(repo, 0o755))
	gitRun(t, repo, "init", "-q", "-b", "main")
	sum := sha256.Sum256([]byte("thirty gigabytes"))
	pointer := lfsPointerText(hex.EncodeToString(sum[:]), 30<<30)
	require.NoError(t, os.WriteFile(filepath.Join(repo, ".gitattributes"), []byte("*.bin filter=lfs diff=lfs merge=lfs -text\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(repo, "big.bin"), []byte(pointer), 0o644))
	off := []string{"-c", "filter.lfs.process=", "-c", "filter.lfs.clean=", "-c", "filter.lfs.smudge=", "-c", "filter.lfs.required=false"}
	gitRun(t, repo, append(off, "add", "-A")...)
	gitRun(t, repo, append(off, "commit", "-q", "-m", "a pointer")...)
	gitRun(t, repo, "config", "filter.lfs.required", "true")
	gitRun(t, repo, "config", "filter.lfs.process", "git-lfs filter-process")
	blob := gitRun(t, repo, "rev-parse", "main:big.bin")

	gitPath, err := exec.LookPath("git")
	require.NoError(t, err)
	bin := filepath.Join(root, "bin")
	require.NoError(t, os.MkdirAll(bin, 0o755))
	require.NoError(t, os.Symlink(gitPath, filepath.Join(bin, "git")))

	got, log := runShapeMission(t, repo, data, bin, addAText)
	requireLandedOnce(t, got, log)
	require.Equal(t, blob, gitRun(t, repo, "rev-parse", "main:big.bin"), "big.bin's blob on main")
	body, err := os.ReadFile(filepath.Join(repo, "big.bin"))
	require.NoError(t, err)
	require.Equal(t, pointer, string(body), "the checkout's big.bin, byte for byte")
	a, _ := showFile(t, repo, "main", "a.txt")
	require.Equal(t, "a\n", a)
	ws := got.Workspaces[0]
	require.Len(t, ws.Notes, 1, "%q", ws.Notes)
	require.Contains(t, ws.Notes[0], "1 file tracked with Git LFS (big.bin) holds its LFS pointer")
	require.Contains(t, ws.Notes[0], "git-lfs is not on the scheduler's PATH")
	brief, err := os.ReadFile(filepath.Join(ws.Path, ".mcp-scheduler", "brief.md"))
	require.NoError(t, err)
	require.Contains(t, string(brief), "## About this workspace\n\n- "+ws.Notes[0])
	require.NotContains(t, log, "filter-process:")
	require.NotContains(t, log, "git-lfs: not found")
}

// TestRealRepo_LFSWithGitLFSChecksOutContentAndNeverDownloads: a repository with a local LFS
// store (`git lfs install --local`), big.bin's object in the store and miss.bin's not. The
// workspace has big.bin's content and miss.bin's pointer (GIT_LFS_SKIP_SMUDGE=1 on the
// checkout, then `git lfs checkout`: nothing is downloaded), get_mission says which file is
// a pointer, a.txt lands, and both LFS files are byte-identical on main. On main before this
// change git-lfs's smudge tried to download miss.bin at `git worktree add`, which failed.
func TestRealRepo_LFSWithGitLFSChecksOutContentAndNeverDownloads(t *testing.T) {
	testenv.LookPathInstalled(t, "git-lfs", "apt-get install git-lfs")
	root := privateTempDir(t)
	repo, data := filepath.Join(root, "repo"), filepath.Join(root, "data")
	require.NoError(t, os.MkdirAll(repo, 0o755))
	gitRun(t, repo, "init", "-q", "-b", "main")
	gitRun(t, repo, "lfs", "install", "--local")
	require.NoError(t, os.WriteFile(filepath.Join(repo, ".gitattributes"), []byte("*.bin filter=lfs diff=lfs merge=lfs -text\n"), 0o644))
	content := map[string][]byte{"big.bin": make([]byte, 200<<10), "miss.bin": make([]byte, 3000)}
	for name, b := range content {
		_, err := rand.Read(b)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(repo, name), b, 0o644))
	}
	gitRun(t, repo, "add", "-A")
	gitRun(t, repo, "commit", "-q", "-m", "LFS files")
	blobs := map[string]string{}
	for name := range content {
		blobs[name] = gitRun(t, repo, "rev-parse", "main:"+name)
	}
	missSum := sha256.Sum256(content["miss.bin"])
	oid := hex.EncodeToString(missSum[:])
	require.NoError(t, os.Remove(filepath.Join(repo, ".git", "lfs", "objects", oid[:2], oid[2:4], oid)))

	got, log := runShapeMission(t, repo, data, os.Getenv("PATH"), addAText)
	requireLandedOnce(t, got, log)
	for name, blob := range blobs {
		require.Equal(t, blob, gitRun(t, repo, "rev-parse", "main:"+name), name)
	}
	ws := got.Workspaces[0]
	body, err := os.ReadFile(filepath.Join(ws.Path, "big.bin"))
	require.NoError(t, err)
	require.Equal(t, content["big.bin"], body, "the workspace has the content the local store holds")
	body, err = os.ReadFile(filepath.Join(ws.Path, "miss.bin"))
	require.NoError(t, err)
	require.Equal(t, lfsPointerText(oid, len(content["miss.bin"])), string(body), "and the pointer of what it lacks")
	require.Len(t, ws.Notes, 1, "%q", ws.Notes)
	require.Contains(t, ws.Notes[0], "1 of 2 files tracked with Git LFS (miss.bin) holds its LFS pointer")
	body, err = os.ReadFile(filepath.Join(repo, "big.bin"))
	require.NoError(t, err)
	require.Equal(t, content["big.bin"], body, "the person's checkout is unchanged")
	require.Empty(t, gitRun(t, repo, "status", "--porcelain"))
}

// fileStates lists every file under dir with its size and modification time.
func fileStates(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		out = append(out, fmt.Sprintf("%s %d %d", p, fi.Size(), fi.ModTime().UnixNano()))
		return nil
	}))
	sort.Strings(out)
	return out
}

// TestRealRepo_SubmodulesPopulatedFromTheModuleStoreOrSaidEmpty: a superproject with two
// submodules whose URLs no longer exist: lib, initialised in the person's checkout (its
// module store .git/modules/lib holds it), and ext, never initialised (no module store). The
// workspace has lib at its recorded commit and ext empty; get_mission and the agent's brief
// say both; a.txt lands, both pointers are unchanged on main and .git/modules is untouched.
// On main before this change lib/ was empty too and nobody was told.
func TestRealRepo_SubmodulesPopulatedFromTheModuleStoreOrSaidEmpty(t *testing.T) {
	root := privateTempDir(t)
	repo, data := filepath.Join(root, "sup"), filepath.Join(root, "data")
	lib := filepath.Join(root, "lib0")
	require.NoError(t, os.MkdirAll(lib, 0o755))
	gitRun(t, lib, "init", "-q", "-b", "main")
	require.NoError(t, os.WriteFile(filepath.Join(lib, "l.txt"), []byte("lib\n"), 0o644))
	gitRun(t, lib, "add", "-A")
	gitRun(t, lib, "commit", "-q", "-m", "lib")
	libCommit := gitRun(t, lib, "rev-parse", "HEAD")
	bare := filepath.Join(root, "lib.git")
	gitRun(t, root, "clone", "-q", "--bare", lib, bare)

	require.NoError(t, os.MkdirAll(repo, 0o755))
	gitRun(t, repo, "init", "-q", "-b", "main")
	require.NoError(t, os.WriteFile(filepath.Join(repo, "README.md"), []byte("super\n"), 0o644))
	gitRun(t, repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", bare, "lib")
	gitRun(t, repo, "config", "-f", ".gitmodules", "submodule.ext.path", "ext")
	gitRun(t, repo, "config", "-f", ".gitmodules", "submodule.ext.url", filepath.Join(root, "ext.git"))
	require.NoError(t, os.Mkdir(filepath.Join(repo, "ext"), 0o755)) // as a clone leaves it: empty
	gitRun(t, repo, "update-index", "--add", "--cacheinfo", "160000,"+libCommit+",ext")
	gitRun(t, repo, "add", "-A")
	gitRun(t, repo, "commit", "-q", "-m", "two submodules")
	for _, d := range []string{bare, lib} {
		require.NoError(t, os.RemoveAll(d)) // any fetch from a submodule's URL fails
	}
	modules := filepath.Join(repo, ".git", "modules")
	before := fileStates(t, modules)

	got, log := runShapeMission(t, repo, data, os.Getenv("PATH"), addAText)
	requireLandedOnce(t, got, log)
	ws := got.Workspaces[0]
	body, err := os.ReadFile(filepath.Join(ws.Path, "lib", "l.txt"))
	require.NoError(t, err)
	require.Equal(t, "lib\n", string(body))
	require.Equal(t, libCommit, gitRun(t, filepath.Join(ws.Path, "lib"), "rev-parse", "HEAD"))
	ext, err := os.ReadDir(filepath.Join(ws.Path, "ext"))
	require.NoError(t, err)
	require.Empty(t, ext)
	require.Len(t, ws.Notes, 2, "%q", ws.Notes)
	require.Contains(t, ws.Notes[0], "submodule ext is empty: the repository has no local copy of it")
	require.Contains(t, ws.Notes[1], "submodule lib is checked out at its recorded commit "+libCommit[:12])
	brief, err := os.ReadFile(filepath.Join(ws.Path, ".mcp-scheduler", "brief.md"))
	require.NoError(t, err)
	for _, n := range ws.Notes {
		require.Contains(t, string(brief), "- "+n+"\n")
	}
	for _, sub := range []string{"lib", "ext"} {
		require.Equal(t, "160000 commit "+libCommit+"\t"+sub, gitRun(t, repo, "ls-tree", "main", sub))
	}
	a, _ := showFile(t, repo, "main", "a.txt")
	require.Equal(t, "a\n", a)
	require.Equal(t, before, fileStates(t, modules), "the person's module store is untouched")
	require.Equal(t, []string{}, strings.Fields(gitRun(t, repo, "status", "--porcelain")))
}

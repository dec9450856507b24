package worktree

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/e2e/testenv"
)

// Git LFS in workspaces (issue 29, bug case B65; docs/workspaces.md "Git LFS").

const gitLFSInstall = "apt-get install git-lfs"

// pathWithoutLFS returns a PATH holding only git: what a daemon started without git-lfs sees.
func pathWithoutLFS(t *testing.T) string {
	t.Helper()
	gitPath, err := exec.LookPath("git")
	require.NoError(t, err)
	bin := t.TempDir()
	require.NoError(t, os.Symlink(gitPath, filepath.Join(bin, "git")))
	_, err = exec.LookPath(filepath.Join(bin, "git-lfs"))
	require.Error(t, err)
	return bin
}

// gitEnvIn runs git in dir with env added (the agent's environment), returning combined
// output and the error.
func gitEnvIn(dir string, env []string, args ...string) (string, error) {
	return gitTryEnv(dir, env, args...)
}

// agentGitEnv is what the scheduler gives the agent's git for ws: its GitConfig as
// GIT_CONFIG_COUNT/KEY/VALUE (engine/scheduler does the same), and PATH.
func agentGitEnv(ws Workspace, path string) []string {
	env := []string{"PATH=" + path, "GIT_CONFIG_COUNT=" + strconv.Itoa(len(ws.GitConfig))}
	for i, kv := range ws.GitConfig {
		k, v, _ := strings.Cut(kv, "=")
		env = append(env, "GIT_CONFIG_KEY_"+strconv.Itoa(i)+"="+k, "GIT_CONFIG_VALUE_"+strconv.Itoa(i)+"="+v)
	}
	return env
}

// lfsPointer is the pointer git-lfs would write for content of that oid and size.
func lfsPointer(oid string, size int) string {
	return "version https://git-lfs.github.com/spec/v1\noid sha256:" + oid + "\nsize " + strconv.Itoa(size) + "\n"
}

// randomBytes returns n random bytes and their SHA-256 in hex.
func randomBytes(t *testing.T, n int) ([]byte, string) {
	t.Helper()
	b := make([]byte, n)
	_, err := rand.Read(b)
	require.NoError(t, err)
	sum := sha256.Sum256(b)
	return b, hex.EncodeToString(sum[:])
}

// newB65Repo is bug case B65's repository: `*.bin filter=lfs diff=lfs merge=lfs -text`, a
// committed pointer big.bin, filter.lfs.required=true and filter.lfs.process
// "git-lfs filter-process". It returns the repository and the pointer's bytes.
func newB65Repo(t *testing.T) (*testRepo, string) {
	t.Helper()
	tr := newTestRepo(t, map[string]string{"README.md": "hello\n"})
	_, oid := randomBytes(t, 64)
	pointer := lfsPointer(oid, 12345)
	tr.write(".gitattributes", "*.bin filter=lfs diff=lfs merge=lfs -text\n")
	tr.write("big.bin", pointer)
	off := []string{"-c", "filter.lfs.process=", "-c", "filter.lfs.clean=", "-c", "filter.lfs.smudge=", "-c", "filter.lfs.required=false"}
	tr.git(append(off, "add", "-A")...)
	tr.git(append(off, "commit", "-q", "-m", "a pointer")...)
	tr.git("config", "filter.lfs.required", "true")
	tr.git("config", "filter.lfs.process", "git-lfs filter-process")
	return tr, pointer
}

// B65: git-lfs is not on the daemon's PATH and the filter is required. The workspace keeps
// the pointer, says so and gives the agent's git the filter off; the agent's commit and the
// work it left uncommitted land, and big.bin is byte-identical on main and in the person's
// checkout. On main before this change `git worktree add` failed with git's raw
// "git-lfs filter-process: 1: git-lfs: not found".
func TestLFS_WithoutGitLFSOnPathTheWorkspaceKeepsPointersAndLands(t *testing.T) {
	t.Parallel()
	tr, pointer := newB65Repo(t)
	blob := tr.git("rev-parse", "main:big.bin")
	noLFS := pathWithoutLFS(t)
	m := newTestManager(t)
	m.git.setPath(noLFS)
	r := openRepo(t, m, tr.dir)

	ws, err := m.Prepare(ctxT(t), PrepareRequest{Repo: r, MissionID: "b65", Attempt: 1})
	require.NoError(t, err)
	require.Equal(t, pointer, readFile(t, ws.Path, "big.bin"), "the pointer, byte for byte")
	require.Len(t, ws.Notes, 1, "%q", ws.Notes)
	require.Contains(t, ws.Notes[0], "big.bin")
	require.Contains(t, ws.Notes[0], "git-lfs is not on the scheduler's PATH")
	require.Equal(t, lfsOffConfig, ws.GitConfig)

	// The agent, with the environment the scheduler gives it: big.bin looks freshly written
	// (git must re-read it), a.txt committed, b.txt left for the scheduler to commit.
	now := time.Now().Add(time.Second)
	require.NoError(t, os.Chtimes(filepath.Join(ws.Path, "big.bin"), now, now))
	writeFile(t, ws.Path, "a.txt", "a\n")
	env := agentGitEnv(ws, noLFS)
	out, err := gitEnvIn(ws.Path, env, "add", "--", "a.txt")
	require.NoError(t, err, out)
	out, err = gitEnvIn(ws.Path, env, "commit", "-q", "-m", "add a.txt")
	require.NoError(t, err, out)
	writeFile(t, ws.Path, "b.txt", "b\n")

	l := land(t, m, r, ws)
	require.Equal(t, LandLanded, l.Status)
	require.ElementsMatch(t, []string{"a.txt", "b.txt"}, l.ChangedFiles)
	require.Equal(t, blob, tr.git("rev-parse", "main:big.bin"), "big.bin's blob on main is unchanged")
	require.Equal(t, "a\n", tr.git("show", "main:a.txt")+"\n")
	require.Equal(t, pointer, readFile(t, tr.dir, "big.bin"), "the person's checkout keeps its file")
	require.Empty(t, tr.git("status", "--porcelain"))
}

// requireGitLFS returns git-lfs's path, failing in CI and skipping elsewhere without it.
func requireGitLFS(t *testing.T) string {
	t.Helper()
	return testenv.LookPathInstalled(t, "git-lfs", gitLFSInstall)
}

// newLFSRepo makes a repository with a local LFS store (`git lfs install --local`) and the
// given .bin files (random content) committed through git-lfs; it returns their content.
func newLFSRepo(t *testing.T, sizes map[string]int) (*testRepo, map[string][]byte) {
	t.Helper()
	tr := newTestRepo(t, map[string]string{"README.md": "hello\n"})
	tr.git("lfs", "install", "--local")
	tr.write(".gitattributes", "*.bin filter=lfs diff=lfs merge=lfs -text\n")
	content := map[string][]byte{}
	for name, n := range sizes {
		b, _ := randomBytes(t, n)
		content[name] = b
		require.NoError(t, os.WriteFile(filepath.Join(tr.dir, name), b, 0o644))
	}
	tr.commitAll("LFS files")
	for name, b := range content {
		sum := sha256.Sum256(b)
		require.Equal(t, lfsPointer(hex.EncodeToString(sum[:]), len(b)), tr.git("cat-file", "-p", "main:"+name)+"\n",
			"%s is committed as an LFS pointer", name)
	}
	return tr, content
}

// lfsObject is where the repository's local store keeps content.
func lfsObject(tr *testRepo, content []byte) string {
	sum := sha256.Sum256(content)
	oid := hex.EncodeToString(sum[:])
	return filepath.Join(tr.dir, ".git", "lfs", "objects", oid[:2], oid[2:4], oid)
}

// With git-lfs on the PATH the workspace has the content of every object the local store
// holds; an object missing locally stays a pointer (said in the notes) instead of making
// `git worktree add` download it or fail. The agent's change to another file lands and both
// LFS files are byte-identical on main. On main before this change Prepare failed: git-lfs's
// smudge tried to download miss.bin ("Smudge error: … batch request: missing protocol").
func TestLFS_WithGitLFSContentIsCheckedOutAndAMissingObjectStaysAPointer(t *testing.T) {
	t.Parallel()
	requireGitLFS(t)
	tr, content := newLFSRepo(t, map[string]int{"big.bin": 5000, "miss.bin": 3000})
	require.NoError(t, os.Remove(lfsObject(tr, content["miss.bin"])))
	blobs := map[string]string{"big.bin": tr.git("rev-parse", "main:big.bin"), "miss.bin": tr.git("rev-parse", "main:miss.bin")}
	m := newTestManager(t)
	r := openRepo(t, m, tr.dir)

	ws := prepare(t, m, r, "lfs", 1)
	got, err := os.ReadFile(filepath.Join(ws.Path, "big.bin"))
	require.NoError(t, err)
	require.Equal(t, content["big.bin"], got, "the content, from the local LFS store")
	require.Equal(t, tr.git("cat-file", "-p", "main:miss.bin")+"\n", readFile(t, ws.Path, "miss.bin"), "the pointer")
	require.Len(t, ws.Notes, 1, "%q", ws.Notes)
	require.Contains(t, ws.Notes[0], "1 of 2 files tracked with Git LFS (miss.bin)")
	require.Empty(t, ws.GitConfig)
	require.Empty(t, gitIn(t, ws.Path, "status", "--porcelain"), "the person's git (git-lfs on PATH) sees a clean workspace")

	writeFile(t, ws.Path, "a.txt", "a\n")
	gitIn(t, ws.Path, "add", "a.txt")
	gitIn(t, ws.Path, "commit", "-q", "-m", "add a.txt")
	l := land(t, m, r, ws)
	require.Equal(t, LandLanded, l.Status)
	require.Equal(t, []string{"a.txt"}, l.ChangedFiles)
	for name, blob := range blobs {
		require.Equal(t, blob, tr.git("rev-parse", "main:"+name), name)
	}
	got, err = os.ReadFile(filepath.Join(tr.dir, "big.bin"))
	require.NoError(t, err)
	require.Equal(t, content["big.bin"], got)
}

// An isolated copy (a clone with an empty LFS store of its own) gets the content from the
// repository's store, and an LFS file the agent changes there lands with its object: the
// repository's store has it and the person's checkout shows the new content. On main before
// this change the object stayed in the copy's store and the landing's fast-forward of the
// person's checkout failed in git-lfs's smudge.
func TestLFS_IsolatedCopyReadsTheRepositorysStoreAndCarriesNewObjectsBack(t *testing.T) {
	t.Parallel()
	requireGitLFS(t)
	tr, content := newLFSRepo(t, map[string]int{"big.bin": 4000})
	m := newTestManager(t)
	r := openRepo(t, m, tr.dir)

	ws, err := m.Prepare(ctxT(t), PrepareRequest{Repo: r, MissionID: "iso", Attempt: 1, Strategy: StrategyIsolatedCopy})
	require.NoError(t, err)
	got, err := os.ReadFile(filepath.Join(ws.Path, "big.bin"))
	require.NoError(t, err)
	require.Equal(t, content["big.bin"], got)
	require.Empty(t, ws.Notes)

	changed, _ := randomBytes(t, 4500)
	require.NoError(t, os.WriteFile(filepath.Join(ws.Path, "big.bin"), changed, 0o644))
	gitIn(t, ws.Path, "add", "big.bin")
	gitIn(t, ws.Path, "commit", "-q", "-m", "change big.bin")
	l := land(t, m, r, ws)
	require.Equal(t, LandLanded, l.Status)
	require.FileExists(t, lfsObject(tr, changed), "the new object is in the repository's store")
	got, err = os.ReadFile(filepath.Join(tr.dir, "big.bin"))
	require.NoError(t, err)
	require.Equal(t, changed, got, "the person's checkout has the landed content")
	require.Empty(t, tr.git("status", "--porcelain"))
}

// A git process that fails inside git-lfs gives an *LFSError: ErrLFS, git's *GitError
// (exit code, stderr) and a message that says what to do.
func TestLFS_AFailureInGitLFSIsTyped(t *testing.T) {
	t.Parallel()
	requireGitLFS(t)
	tr, content := newLFSRepo(t, map[string]int{"big.bin": 2000})
	require.NoError(t, os.Remove(lfsObject(tr, content["big.bin"])))
	m := newTestManager(t)
	dir := filepath.Join(t.TempDir(), "wt")
	// Without pointers: the smudge of an object missing locally fails.
	_, err := m.git.run(ctxT(t), tr.dir, runOpts{}, "worktree", "add", "--detach", "--end-of-options", dir, "main")
	require.ErrorIs(t, err, ErrLFS)
	var ge *GitError
	require.ErrorAs(t, err, &ge)
	require.NotZero(t, ge.ExitCode)
	require.Contains(t, err.Error(), "git lfs fetch")
	require.Contains(t, err.Error(), "big.bin")
}

// In a sparse checkout `git lfs checkout` is told the paths checked out: git-lfs 3.3 would
// also write the files outside the cone.
func TestLFS_ASparseCheckoutGetsContentOnlyInsideItsCone(t *testing.T) {
	t.Parallel()
	requireGitLFS(t)
	tr := newTestRepo(t, map[string]string{"README.md": "hello\n"})
	tr.git("lfs", "install", "--local")
	tr.write(".gitattributes", "*.bin filter=lfs diff=lfs merge=lfs -text\n")
	in, _ := randomBytes(t, 700)
	out, _ := randomBytes(t, 900)
	writeFile(t, tr.dir, "src/in [1].bin", string(in))
	writeFile(t, tr.dir, "big/out.bin", string(out))
	tr.commitAll("LFS files in and out of the cone")
	clone := filepath.Join(t.TempDir(), "clone")
	gitIn(t, tr.dir, "clone", "-q", "--no-checkout", tr.dir, clone)
	gitIn(t, clone, "sparse-checkout", "set", "--cone", "src")
	o, err := gitEnvIn(clone, []string{"GIT_LFS_SKIP_SMUDGE=1"}, "checkout", "-q", "main")
	require.NoError(t, err, o)
	m := newTestManager(t)

	notes, cfg, err := m.lfsFill(ctxT(t), clone, filepath.Join(tr.dir, ".git", "lfs"))
	require.NoError(t, err)
	require.Empty(t, notes)
	require.Empty(t, cfg)
	got, err := os.ReadFile(filepath.Join(clone, "src", "in [1].bin"))
	require.NoError(t, err)
	require.Equal(t, in, got)
	require.NoDirExists(t, filepath.Join(clone, "big"), "nothing written outside the cone")
}

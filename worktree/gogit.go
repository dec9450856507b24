package worktree

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-billy/v5/osfs"
	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/storage/filesystem"
	"github.com/go-git/go-git/v5/storage/filesystem/dotgit"
)

// objectCacheSize bounds go-git's cache of decoded objects per open repository. go-git's
// default (PlainOpen) is 96 MiB, and a repository stays open for the life of the process:
// every landing read new commits and trees (a tree is rewritten by every change under it),
// so a long-running serve grew by tens of KB per mission until it held 96 MiB per repository
// (a churn of 900 missions: RSS 38 → 105 MB; in heap profiles of cmd/soak, 82 % of the live
// heap's growth was trees in this cache, decoded by changedPaths at each landing). 4 MiB keeps
// the hot objects (the target's commits and top trees) and keeps memory flat.
const objectCacheSize = 4 * cache.MiByte

// openGoGit opens the repository at top level root whose common git dir is commonDir, as
// git.PlainOpenWithOptions with EnableDotGitCommonDir would, but with a bounded object cache
// and the extensions go-git refuses but need not know hidden from it (openableStorage); an
// extension that changes what go-git reads gives an *ExtensionError.
func openGoGit(root, commonDir string) (*git.Repository, error) {
	gitDir, err := dotGitDir(root)
	if err != nil {
		return nil, err
	}
	var fs billy.Filesystem = osfs.New(gitDir)
	if filepath.Clean(gitDir) != filepath.Clean(commonDir) {
		fs = dotgit.NewRepositoryFilesystem(fs, osfs.New(commonDir)) // a linked worktree
	}
	s, err := openableStorage(root, filesystem.NewStorage(fs, cache.NewObjectLRU(objectCacheSize)))
	if err != nil {
		return nil, err
	}
	return git.Open(s, osfs.New(root))
}

// dotGitDir resolves root/.git: the directory itself, or the gitdir a .git file names.
func dotGitDir(root string) (string, error) {
	dot := filepath.Join(root, ".git")
	st, err := os.Stat(dot)
	if err != nil {
		return "", err
	}
	if st.IsDir() {
		return filepath.EvalSymlinks(dot)
	}
	b, err := os.ReadFile(dot)
	if err != nil {
		return "", err
	}
	line := strings.TrimSpace(string(b))
	dir, ok := strings.CutPrefix(line, "gitdir: ")
	if !ok {
		return "", fmt.Errorf("%s: not a gitdir file (%q)", dot, line)
	}
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(root, dir)
	}
	return filepath.EvalSymlinks(dir)
}

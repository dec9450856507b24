// Package worktree gives every mission attempt its own git workspace and lands finished work
// on a target branch (design brief §6).
//
// Division of labour: go-git v5 reads (refs, commits, trees, ancestry, diffs); the git CLI
// (≥ 2.38) does every structural change and every write a person's git might race with:
// `git worktree add/move/remove/prune`, `git add`/`git commit` in a workspace,
// `git merge-tree --write-tree`, `git update-ref <ref> <new> <old>` and `git merge --ff-only`
// in a checkout that holds the target. One write is go-git's: the landing's merge commit, a new
// object no ref names yet, encoded byte for byte as `git commit-tree` would (which still
// writes it where the configuration changes its bytes). Status also goes through the CLI
// (`--no-optional-locks`), because go-git ignores clean/smudge filters and is slower.
//
// Concurrency: structural changes are serialised per repository, landings per (repository,
// target branch), each by an in-process mutex plus a file lock under Config.DataDir/locks, so
// several scheduler processes sharing one data directory exclude each other.
//
// The package knows nothing of missions beyond their id and attempt number; the engine decides
// policy (what to keep, when to land, what to do with a conflict). docs/workspaces.md describes
// the layout, the landing algorithm, idempotency and crash behaviour.
package worktree

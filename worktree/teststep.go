package worktree

// testStep, when set, is called at named steps of a landing so that a test of this package
// can interleave another process's git, or kill its own process, at an exact point. Only this
// package's tests set it (no exported API reaches it); it is nil in production, where step
// costs one nil check. Steps: "stage.tip-read" (the attempt branch's tip was read),
// "probe.before-status" (the pending-work probe is about to run git status),
// "ff.before-merge" (about to run `git merge --ff-only` in a checkout holding the target),
// "merge.written" (a three-way merge's commit is in the object database, nothing moved),
// "ff.merged" (that `git merge --ff-only` succeeded: the target moved),
// "batch.before-pending" and "batch.pending-done" (LandBatch is about to commit, or has
// committed, one workspace's pending work; called from one goroutine per workspace),
// "ff.files-set-aside" (files in the way of a refused fast-forward were set aside).
var testStep func(name string)

func step(name string) {
	if testStep != nil {
		testStep(name)
	}
}

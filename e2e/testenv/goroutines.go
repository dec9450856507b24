package testenv

import (
	"runtime"
	"strings"
)

// GoroutinesIn counts the goroutines of this process whose stack passes through every one of
// fns (function or method names as a stack trace prints them, e.g.
// "scheduler.(*supervisor).keep(" or "engine.(*Subscription).Wait("): how a test sees that a
// goroutine reached a blocking point (a claim waiting for work) the product does not report.
// Stack traces leave out the runtime's own frames: a goroutine blocked in a select is told by
// its header ("goroutine 7 [select]:"), so match "[select", not "runtime.selectgo(".
func GoroutinesIn(fns ...string) int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	count := 0
	for _, g := range strings.Split(string(buf), "\n\n") {
		if containsAll(g, fns) {
			count++
		}
	}
	return count
}

func containsAll(s string, subs []string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

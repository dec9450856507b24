package testenv

import (
	"runtime"
	"strings"
)

// GoroutinesIn counts the goroutines of this process whose stack passes through every one of
// fns (function or method names as a stack trace prints them, e.g.
// "scheduler.(*supervisor).keep(" or "engine.(*Subscription).Wait("): how a test sees that a
// goroutine reached a blocking point (a claim waiting for work) the product does not report.
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

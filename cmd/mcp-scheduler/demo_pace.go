package main

import (
	"strings"
	"time"
)

// maxDemoPace bounds --pace: a slower demo is no easier to watch.
const maxDemoPace = time.Minute

// demoPaceSteps bounds how many paced steps the voyage waits for one after the other (its
// missions' steps along the longest chain, a retry and the review included, with room to
// spare), for the demo's deadline.
const demoPaceSteps = 60

// demoTimeoutFor is the demo's deadline at a pace: demoTimeout, plus the paced steps' waits.
func demoTimeoutFor(pace time.Duration) time.Duration { return demoTimeout + demoPaceSteps*pace }

// paced makes a demo agent's brief wait pace after each of its steps (a directive that does
// something a person sees: progress, a write, a commit; not the set-up ones, @heartbeat and
// @flaky, nor the last, @done), with the reference agent's own @sleep. pace 0 leaves it as
// it is.
func paced(brief string, pace time.Duration) string {
	if pace <= 0 {
		return brief
	}
	var out []string
	for _, l := range strings.Split(brief, "\n") {
		out = append(out, l)
		d, _, _ := strings.Cut(l, " ")
		switch d {
		case "@progress", "@write", "@append", "@commit":
			out = append(out, "@sleep "+pace.String())
		}
	}
	return strings.Join(out, "\n")
}

// pacedReview scripts the reviewer of a reviewed demo mission at a pace: a progress line,
// a wait of pace, then the approval the reviewer gives by default. Meanwhile the reviewed
// mission waits to land (landing review), so the dashboard's landing queue and the graph's
// dashed border show a landing that waits. pace 0 leaves the reviewer as it is ("").
func pacedReview(pace time.Duration) string {
	if pace <= 0 {
		return ""
	}
	return "\n@review progress 50 reading the change\n@review sleep " + pace.String() +
		"\n@review verdict approved the reference agent read the change and has no findings"
}

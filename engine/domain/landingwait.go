package domain

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Landing wait codes: why a completed mission's landing does not move now. The planner
// (engine/planner, the landing part of a plan) gives one to every landing it does not start,
// the scheduler records it as the mission's hold, and get_mission's why_not_running,
// voyage_status and status show it. The codes of the states come from the table below;
// LandWaitTargetBusy is the one wait that no landing state names.
const (
	LandWaitQueued     = "landing_queued"      // pending or approved: the landing service takes it on its next pass
	LandWaitReview     = "landing_review"      // its reviewer's verdict comes first
	LandWaitApproval   = "landing_approval"    // approve_landing is needed
	LandWaitCheckout   = "landing_checkout"    // the target's checkout has local changes in the same files
	LandWaitRepair     = "landing_repair"      // a repair mission carries its work
	LandWaitConflicted = "landing_conflicted"  // a decision is needed
	LandWaitLeft       = "landing_left"        // left for a person (landing policy none)
	LandWaitTargetBusy = "landing_target_busy" // another landing on the same target branch is in flight
)

// LandingWait is what a landing in one state waits for: whether the landing service works
// on it (the landing queue), the wait's code and the sentence that explains it, with
// "{mission}" standing for the mission's id and "{check}" for the failing check (" (`go test
// ./...`)", or nothing when unknown). Cause, when set, is the status of the landing record
// that put the landing in State (a landing conflicted because its checks failed is told
// apart from one that conflicts); such a row goes before the state's row without one.
type LandingWait struct {
	State  LandingState
	Queued bool
	Code   string
	Text   string
	Cause  string
}

// landingWaits is the one table of what each unlanded state waits for: Queued decides which
// landings the landing service works on (the landing queue, Reader.MissionsLandingQueue, and
// the planner's landing moves), and Code and Text explain the others (and a queued one the
// planner did not start). Landed and not_required wait for nothing and are absent.
var landingWaits = []LandingWait{
	{LandingPending, true, LandWaitQueued, "queued to land: the landing service takes it on its next pass", ""},
	{LandingApproved, true, LandWaitQueued, "approved and queued to land: the landing service takes it on its next pass", ""},
	{LandingReview, true, LandWaitReview, "its reviewer's verdict comes first", ""},
	{LandingWaiting, true, LandWaitCheckout, "the target's checkout has local changes in the same files: commit or stash them (list_escalations names them); the landing is retried by itself", ""},
	{LandingApproval, false, LandWaitApproval, "it needs approval: approve_landing {mission} (get_mission_diff {mission} shows the work)", ""},
	{LandingRepair, false, LandWaitRepair, "a repair mission carries its work: it lands when the repair lands", ""},
	{LandingConflicted, false, LandWaitConflicted, "the repository's checks failed on the merged tree{check}, after repair missions: a decision is needed (list_escalations)", LandingRecordChecksFailed},
	{LandingConflicted, false, LandWaitConflicted, "the landing was refused: its branch adds symbolic links that point outside the repository (list_escalations names them): a decision is needed", LandingRecordRefused},
	{LandingConflicted, false, LandWaitConflicted, "it conflicts with the target: a decision is needed (list_escalations)", ""},
	{LandingLeft, false, LandWaitLeft, "left for a person (landing policy none): it will not land by itself", ""},
}

// LandingRecordChecksFailed is a landing record's status when the repository's checks failed
// on the merged tree (worktree.LandChecksFailed).
const LandingRecordChecksFailed = "checks_failed"

// LandingRecordRefused is a landing record's status when the workspace manager refused the
// landing: the branch adds symbolic links that point outside the repository
// (worktree.LandRefused).
const LandingRecordRefused = "refused"

// Wait returns what a landing in state l waits for whatever put it there (false for none,
// landed and not_required, which wait for nothing).
func (l LandingState) Wait() (LandingWait, bool) {
	for _, w := range landingWaits {
		if w.State == l && w.Cause == "" {
			return w, true
		}
	}
	return LandingWait{}, false
}

// WaitAfter is Wait told by the landing record that put the landing in state l (last, the
// mission's latest record; nil when unknown): the row of its cause, with its failing check,
// when the table has one.
func (l LandingState) WaitAfter(last *Landing) (LandingWait, bool) {
	if last != nil {
		for _, w := range landingWaits {
			if w.State == l && w.Cause != "" && w.Cause == last.Status {
				check := ""
				if c := FailedCheck(last.Detail); c != "" {
					check = " (`" + c + "`)"
				}
				w.Text = strings.ReplaceAll(w.Text, "{check}", check)
				return w, true
			}
		}
	}
	return l.Wait()
}

// ToldByRecord reports whether what a landing in state l waits for depends on the landing
// record that put it there (WaitAfter), so that a reader fetches that record only then.
func (l LandingState) ToldByRecord() bool {
	return slices.ContainsFunc(landingWaits, func(w LandingWait) bool { return w.State == l && w.Cause != "" })
}

// Explain is the wait's sentence for mission id (a failing check WaitAfter did not fill in is
// left out).
func (w LandingWait) Explain(id string) string {
	return strings.NewReplacer("{mission}", id, "{check}", "").Replace(w.Text)
}

// CheckFailedLine is the first line of a failing check's output in a landing record's detail:
// the scheduler writes it (argv joined with spaces, then what happened), FailedCheck reads it.
func CheckFailedLine(argv, what string) string { return "check `" + argv + "` " + what }

var failedCheckLine = regexp.MustCompile("(?m)^check `([^`\n]*)` ")

// FailedCheck is the command of the first failing check a landing record's detail names
// (CheckFailedLine), "" when it names none.
func FailedCheck(detail string) string {
	if m := failedCheckLine.FindStringSubmatch(detail); m != nil {
		return m[1]
	}
	return ""
}

// LandingWaitCodes are every landing wait code, each once, in the table's order with
// LandWaitTargetBusy last.
func LandingWaitCodes() []string {
	var out []string
	for _, w := range landingWaits {
		if !slices.Contains(out, w.Code) {
			out = append(out, w.Code)
		}
	}
	return append(out, LandWaitTargetBusy)
}

// IsLandingWait reports whether a reason code is one of the landing waits above.
func IsLandingWait(code string) bool {
	if code == LandWaitTargetBusy {
		return true
	}
	for _, w := range landingWaits {
		if w.Code == code {
			return true
		}
	}
	return false
}

// TargetBusyText explains LandWaitTargetBusy for a landing on target of repository ("" for
// the default branch): another landing on it is in flight, in this process (node "" on a
// single node, this node's name in cluster mode, locked false), or on another node, which
// holds the target's landing lock (cluster mode; the holder renews it while it lands, and a
// lock not renewed, its node dead, is taken over at expiry). The text names no time, so a
// renewal does not change the hold.
func TargetBusyText(repository, target, node string, locked bool) string {
	if target == "" {
		target = "the default branch"
	}
	switch {
	case node == "":
		return fmt.Sprintf("another landing on %s of %s is in flight: this one is taken when it is done", target, repository)
	case !locked:
		return fmt.Sprintf("node %s is landing onto %s of %s: this one is taken when it is done", node, target, repository)
	}
	return fmt.Sprintf("node %s is landing onto %s of %s: this one is taken when that node's landing lock is released (the node renews it while it lands; it expires a minute after the node stops)",
		node, target, repository)
}

package domain

import "testing"

// A conflicted landing whose record says its checks failed is told by its cause's row,
// naming the check; a real conflict, or no record, keeps the state's own sentence.
func TestLandingWaitAfter_ToldByTheRecord(t *testing.T) {
	checks := &Landing{Status: LandingRecordChecksFailed, Detail: "removed stale git locks left by a killed git: index.lock\n" +
		CheckFailedLine("go test ./...", "failed: exit status 1") + "\n--- FAIL: TestX"}
	w, ok := LandingConflicted.WaitAfter(checks)
	want := "the repository's checks failed on the merged tree (`go test ./...`), after repair missions: a decision is needed (list_escalations)"
	if !ok || w.Code != LandWaitConflicted || w.Explain("msn_x") != want {
		t.Fatalf("checks failed: %v %+v %q", ok, w, w.Explain("msn_x"))
	}
	w, _ = LandingConflicted.WaitAfter(&Landing{Status: LandingRecordChecksFailed, Detail: "no check line"})
	if got := w.Explain("msn_x"); got != "the repository's checks failed on the merged tree, after repair missions: a decision is needed (list_escalations)" {
		t.Fatalf("unknown check: %q", got)
	}
	for _, last := range []*Landing{nil, {Status: "conflicted", ConflictPaths: []string{"a"}}} {
		w, _ := LandingConflicted.WaitAfter(last)
		if got := w.Explain("msn_x"); got != "it conflicts with the target: a decision is needed (list_escalations)" {
			t.Fatalf("%+v: %q", last, got)
		}
	}
	if !LandingConflicted.ToldByRecord() || LandingApproval.ToldByRecord() {
		t.Fatal("only conflicted is told by its record")
	}
	if w, _ := LandingApproval.WaitAfter(checks); w.Code != LandWaitApproval {
		t.Fatalf("another state ignores the record: %+v", w)
	}
}

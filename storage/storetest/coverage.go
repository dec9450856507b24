package storetest

import (
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
)

// coveredBy names, for a seam method without a case group of its own name, the group whose
// cases check it.
var coveredBy = map[string]string{
	"AttemptList":       "AttemptInsert",
	"LandingList":       "LandingUpsert",
	"AgentCount":        "AgentUpsert",
	"WaveLatest":        "WaveInsert",
	"Paused":            "SetPaused",
	"HoldList":          "HoldUpsert",
	"RateWindowList":    "RateWindowPut",
	"DependenciesOf":    "DependencyInsert",
	"DependentsOf":      "DependencyInsert",
	"WriteAreaSet":      "WriteAreaOverlaps",
	"TryLeaderLock":     "HostLock",
	"ReleaseLeaderLock": "HostLock",
	"NoticeCursor":      "NoticeEnqueue",
	"NoticePrune":       "NoticesGaveUp",
}

// runRecord is what one Exercise run entered: its areas and its case groups (one per method).
type runRecord struct {
	mu     sync.Mutex
	areas  map[string]bool
	groups map[string]bool
}

// records holds the record of each running Exercise, by its top-level test's name.
var records sync.Map

func recordOf(t *testing.T) *runRecord {
	top, _, _ := strings.Cut(t.Name(), "/")
	r, _ := records.LoadOrStore(top, &runRecord{areas: map[string]bool{}, groups: map[string]bool{}})
	return r.(*runRecord)
}

func (r *runRecord) add(set map[string]bool, name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	set[name] = true
}

// group runs the cases of one seam method (sub-test name) and records that it has some.
func group(t *testing.T, method string, fn func(t *testing.T)) {
	t.Helper()
	r := recordOf(t)
	r.add(r.groups, method)
	t.Run(method, fn)
}

// seamMethods returns the methods of Store, Tx (Reader included) and HostLock.
func seamMethods() []string {
	var out []string
	for _, typ := range []reflect.Type{reflect.TypeFor[engine.Store](), reflect.TypeFor[engine.Tx](), reflect.TypeFor[engine.HostLock]()} {
		for i := range typ.NumMethod() {
			out = append(out, typ.Method(i).Name)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// checkCoverage fails t for every seam method with no case group (directly or through
// coveredBy), once every area ran; a run that -run narrowed says so and checks nothing.
func checkCoverage(t *testing.T) {
	t.Helper()
	r := recordOf(t)
	defer records.Delete(t.Name())
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, a := range areas {
		if !r.areas[a.name] {
			t.Logf("storetest: area %s did not run (-run), so the method coverage was not checked", a.name)
			return
		}
	}
	for _, m := range seamMethods() {
		name := m
		if by, ok := coveredBy[m]; ok {
			name = by
		}
		if !r.groups[name] {
			t.Errorf("storetest: the seam method %s has no conformance case: add a group(t, %q, …) to the file of its area", m, m)
		}
	}
}

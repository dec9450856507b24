package engine_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/storage/teststore"
)

// Issue 28: titles, dispatch keys and escalation kinds refuse bidirectional controls and
// invisible characters, naming the field, the character and where; nothing is stored. Briefs
// and other free text keep them (they are escaped where they are shown).
func TestNames_RefuseHiddenCharactersNamingFieldAndCodePoint(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, err := b.e.CreateMission(b.ctx, engine.MissionSpec{Title: "abcd\u202Eexe.txt", WriteArea: []string{"a/**"}}, "test")
	require.EqualError(t, err, "title: contains U+202E (RIGHT-TO-LEFT OVERRIDE) at character 5: control characters, bidirectional controls and invisible characters are not allowed in titles (remove it)")
	_, err = b.e.CreateMission(b.ctx, engine.MissionSpec{Title: "two\nlines"}, "test")
	require.ErrorContains(t, err, "title: contains U+000A (a control character) at character 4: ")

	_, err = b.e.Dispatch(b.ctx, engine.VoyageSpec{Title: "zero\u200Bwidth", Missions: []engine.MissionSpec{{Key: "a", Title: "a"}}}, "test")
	require.ErrorContains(t, err, "title: contains U+200B (ZERO WIDTH SPACE) at character 5: ")
	_, err = b.e.Dispatch(b.ctx, engine.VoyageSpec{Title: "v", Missions: []engine.MissionSpec{{Key: "a", Title: "a"}, {Key: "b\u200D", Title: "b"}}}, "test")
	require.ErrorContains(t, err, "missions[1].key: contains U+200D (ZERO WIDTH JOINER) at character 2: ")
	_, err = b.e.Dispatch(b.ctx, engine.VoyageSpec{Title: "v", Missions: []engine.MissionSpec{{Key: "a", Title: "\u2066a"}}}, "test")
	require.ErrorContains(t, err, "missions[0].title: contains U+2066 (LEFT-TO-RIGHT ISOLATE) at character 1: ")

	m := b.create(engine.MissionSpec{Title: "plain", Brief: "a brief may say \u202Eexe.txt", WriteArea: []string{"b/**"}})
	require.Equal(t, "a brief may say \u202Eexe.txt", b.get(m.ID).Brief, "free text is stored as written")
	title := "still\u200Bhidden"
	_, err = b.e.UpdateMission(b.ctx, m.ID, engine.MissionPatch{Title: &title}, "test")
	require.ErrorContains(t, err, "title: contains U+200B (ZERO WIDTH SPACE) at character 6: ")
	_, err = b.e.Escalate(b.ctx, engine.EscalationSpec{Kind: "deci\u202Esion", Reason: "r", DecisionRequired: "d"}, "test")
	require.ErrorContains(t, err, "kind: contains U+202E (RIGHT-TO-LEFT OVERRIDE) at character 5: ")

	ms, err := b.e.ListMissions(b.ctx, engine.MissionFilter{})
	require.NoError(t, err)
	require.Len(t, ms, 1, "nothing refused was stored")
	require.Equal(t, "plain", b.get(m.ID).Title)
}

// A title stored before the rule (written straight to the store here) is kept as it is: it
// does not stop an update of other fields, and a mission made about it (a debugger) gets a
// title the rule accepts, with the character shown as an escape.
func TestNames_TitleStoredBeforeTheRuleIsKept(t *testing.T) {
	t.Parallel()
	b := setup(t, func(o *engine.Options) { o.DebugAvailable = func() bool { return true } })
	m := b.create(engine.MissionSpec{Title: "stubborn", WriteArea: []string{"s/**"}, RetryBudget: budget(5)})
	legacy := "stub\u202Eborn"
	teststore.WriteMissionTitle(t, b.st, m.ID, legacy)

	p := 7
	got, err := b.e.UpdateMission(b.ctx, m.ID, engine.MissionPatch{Priority: &p}, "test")
	require.NoError(t, err, "a stored title does not stop other changes")
	require.Equal(t, legacy, got.Title)
	require.Equal(t, 7, got.Priority)

	f := domain.Failure{Kind: "test", Summary: "nil pointer"}
	b.failRunning(m.ID, f)
	b.clock.Advance(time.Minute)
	out := b.failRunning(m.ID, f)
	require.Equal(t, domain.DecisionDebug, out.Decision.Kind)
	kids, err := b.e.ListMissions(b.ctx, engine.MissionFilter{SubjectID: m.ID})
	require.NoError(t, err)
	require.Len(t, kids, 1)
	require.Equal(t, "Debug: stub<U+202E>born", kids[0].Title)
	require.Equal(t, legacy, b.get(m.ID).Title, "the stored title is not lost")
}

func TestDerivedTitle_ShownAndCut(t *testing.T) {
	t.Parallel()
	require.Equal(t, "Review: a<U+200B>b", engine.DerivedTitle("Review: ", "a\u200Bb"))
	long := engine.DerivedTitle("Repair: ", strings.Repeat("é", engine.MaxTitleLen))
	require.Len(t, []rune(long), engine.MaxTitleLen)
	require.True(t, strings.HasSuffix(long, "…"))
	require.NoError(t, domain.CheckName("title", "titles", long))
}

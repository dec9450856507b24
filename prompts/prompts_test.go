package prompts

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// update rewrites the golden files: UPDATE_GOLDEN=true go test ./prompts/
var update = os.Getenv("UPDATE_GOLDEN") == "true"

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if update {
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "missing golden file: run UPDATE_GOLDEN=true go test ./prompts/")
	require.Equal(t, string(want), got, "rendering of %s changed: review the diff, then UPDATE_GOLDEN=true go test ./prompts/", name)
}

func TestGolden_Rendering(t *testing.T) {
	cases := []struct {
		name   string
		render func() (string, error)
	}{
		{"plan_voyage_full", func() (string, error) {
			return PlanVoyage(Plan{Goal: "Add rate limiting to the public API", Repository: "/src/api",
				Constraints: "Do not touch the billing package.", MaxMissions: 5})
		}},
		{"plan_voyage_minimal", func() (string, error) { return PlanVoyage(Plan{Goal: "Fix the flaky login test"}) }},
		{"agent_brief_pull_resumed", func() (string, error) {
			return AgentBrief(Brief{MissionID: "msn_01JD5Z8Q6X3V4W5Y6Z7A8B9C0D", Attempt: 2, Epoch: 7, Title: "Token-bucket limiter",
				Brief: "Write internal/ratelimit with a token bucket.", AcceptanceCriteria: []string{"tests cover refill", "go vet is clean"},
				WriteArea: []string{"internal/ratelimit/**"}, Persona: "implementer", Kind: "work",
				Workspace: "/data/worktrees/abc/msn_01JD5Z8Q6X3V4W5Y6Z7A8B9C0D/a2", Branch: "mcp-scheduler/msn_01JD5Z8Q6X3V4W5Y6Z7A8B9C0D/a1",
				BaseCommit: "4b825dc642cb6eb9a060e54bf8d69288fbee4904", Checkpoint: `{"step":3,"note":"has ` + "```" + ` in it"}`,
				PullMode: true, HeartbeatSeconds: 20})
		}},
		{"agent_brief_ndjson_repair", func() (string, error) {
			return AgentBrief(Brief{MissionID: "msn_01JD5Z8Q6X3V4W5Y6Z7A8B9C0E", Attempt: 1, Epoch: 1, Title: "Repair: limiter conflicts",
				Brief: "Resolve the conflicts with main.", Kind: "repair", SubjectID: "msn_01JD5Z8Q6X3V4W5Y6Z7A8B9C0D",
				Workspace: "/data/worktrees/abc/x/a1", Branch: "mcp-scheduler/x/a1", Conflicts: []string{"go.mod", "internal/ratelimit/bucket.go"}})
		}},
		{"agent_brief_workspace_notes", func() (string, error) {
			return AgentBrief(Brief{MissionID: "msn_01JD5Z8Q6X3V4W5Y6Z7A8B9C0J", Attempt: 2, Epoch: 2, Title: "Repair: assets",
				Brief: "Resolve the conflicts with main.", Kind: "repair", SubjectID: "msn_01JD5Z8Q6X3V4W5Y6Z7A8B9C0D",
				Workspace: "/data/worktrees/abc/x/a2", Branch: "mcp-scheduler/x/a2", Conflicts: []string{"README.md"},
				WorkspaceNotes: []string{"1 file tracked with Git LFS (big.bin) holds its LFS pointer, not the content: git-lfs is not on the scheduler's PATH.",
					"submodule vendor/lib is empty: the repository has no local copy of it"}})
		}},
		{"agent_brief_review", func() (string, error) {
			return AgentBrief(Brief{MissionID: "msn_01JD5Z8Q6X3V4W5Y6Z7A8B9C0F", Attempt: 1, Epoch: 3, Title: "Review: limiter",
				Brief: "Review the limiter.", Kind: "review", SubjectID: "msn_01JD5Z8Q6X3V4W5Y6Z7A8B9C0D", Persona: "reviewer",
				Workspace: "/data/snap", ReadOnly: true, PullMode: true})
		}},
		{"review_mission", func() (string, error) {
			return ReviewMission(Review{MissionID: "msn_01JD5Z8Q6X3V4W5Y6Z7A8B9C0D", Title: "Token-bucket limiter",
				Brief: "Write internal/ratelimit with a token bucket.", AcceptanceCriteria: []string{"tests cover refill"},
				WriteArea: []string{"internal/ratelimit/**"}, Branch: "mcp-scheduler/msn_01JD5Z8Q6X3V4W5Y6Z7A8B9C0D/a1",
				BaseCommit: "4b825dc642cb6eb9a060e54bf8d69288fbee4904", Workspace: "/data/snap",
				ChangedFiles: []string{"internal/ratelimit/bucket.go", "internal/ratelimit/bucket_test.go"},
				Summary:      "Added the bucket.\nTests pass."})
		}},
		{"escalation_report_existing", func() (string, error) {
			return EscalationReport(Escalation{ID: "esc_01JD5Z8Q6X3V4W5Y6Z7A8B9C0G", MissionIDs: []string{"msn_01JD5Z8Q6X3V4W5Y6Z7A8B9C0D"},
				VoyageID: "vyg_01JD5Z8Q6X3V4W5Y6Z7A8B9C0H", Route: "person", Kind: "environment",
				Reason: "authentication failed: the API key is missing", DecisionRequired: "provide a key",
				Evidence: []string{"kind: auth", "diagnostic: 401 from the model API"}, SafeNextStep: "resolve_escalation with action retry once fixed",
				Missions: []string{"msn_01JD5Z8Q6X3V4W5Y6Z7A8B9C0D (Token-bucket limiter): blocked"}})
		}},
		{"escalation_report_new", func() (string, error) { return EscalationReport(Escalation{}) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := c.render()
			require.NoError(t, err)
			require.True(t, strings.HasSuffix(got, "\n") && !strings.HasSuffix(got, "\n\n"), "one trailing newline")
			require.NotContains(t, got, "<no value>")
			require.NotContains(t, got, "\n\n\n", "no runs of blank lines")
			again, err := c.render()
			require.NoError(t, err)
			require.Equal(t, got, again, "rendering is deterministic")
			golden(t, c.name, got)
		})
	}
}

func TestRender_RequiredFields(t *testing.T) {
	_, err := PlanVoyage(Plan{})
	require.ErrorContains(t, err, "Goal must not be empty")
	_, err = AgentBrief(Brief{Title: "x"})
	require.ErrorContains(t, err, "MissionID and Title")
	_, err = ReviewMission(Review{MissionID: "m"})
	require.ErrorContains(t, err, "MissionID and Title")
}

func TestFence_LongerThanContent(t *testing.T) {
	require.Equal(t, "```json\n{}\n```", fence("json", "{}"))
	require.Equal(t, "````\na ``` b\n````", fence("", "a ``` b"))
}

func TestBrief_PullModeNamesTheFence(t *testing.T) {
	got, err := AgentBrief(Brief{MissionID: "m1", Title: "t", Epoch: 42, PullMode: true, Workspace: "/w"})
	require.NoError(t, err)
	require.Contains(t, got, "epoch` 42")
	require.Contains(t, got, "heartbeat")
	require.NotContains(t, got, "worker.result")
	got, err = AgentBrief(Brief{MissionID: "m1", Title: "t", Workspace: "/w"})
	require.NoError(t, err)
	require.Contains(t, got, "worker.result")
	require.NotContains(t, got, "complete_mission")
}

func TestNames_OneTemplateEach(t *testing.T) {
	for _, n := range Names() {
		require.NotNil(t, templates.Lookup(n+".tmpl"), n)
	}
	require.Len(t, templates.Templates(), len(Names()))
}

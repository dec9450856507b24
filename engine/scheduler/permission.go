package scheduler

import (
	"strings"

	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// withProfile names the profile in a permission failure's summary ("profile claude: …"): the
// adapter names the refused tool or command and the profile key that would allow it, but
// only the scheduler knows which [[profiles]] entry ran the attempt, and that is where a
// person changes the key. Other failures are returned as they are.
func withProfile(f domain.Failure, profile string) domain.Failure {
	if f.Kind != domain.FailurePermission || profile == "" {
		return f
	}
	prefix := "profile " + profile + ": "
	if !strings.HasPrefix(f.Summary, prefix) {
		f.Summary = prefix + f.Summary
	}
	return f
}

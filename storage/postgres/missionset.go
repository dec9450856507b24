package postgres

import (
	"context"
	"fmt"
	"math/bits"
	"strings"
	"sync"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// setCol is one mutable mission field as columns: their names and their values from a row.
type setCol struct {
	cols []string
	args func(m *domain.Mission) []any
}

// one is the setCol of a field stored in one column.
func one(col string, arg func(m *domain.Mission) any) setCol {
	return setCol{cols: []string{col}, args: func(m *domain.Mission) []any { return []any{arg(m)} }}
}

// setCols maps each engine.MissionFields bit (by bit number) to its columns, in the order of
// the bits.
var setCols = [...]setCol{
	one("client_key", func(m *domain.Mission) any { return m.Key }),
	one("title", func(m *domain.Mission) any { return m.Title }),
	one("brief", func(m *domain.Mission) any { return m.Brief }),
	one("target_branch", func(m *domain.Mission) any { return m.TargetBranch }),
	one("priority", func(m *domain.Mission) any { return m.Priority }),
	one("kind", func(m *domain.Mission) any { return string(m.Kind) }),
	one("persona", func(m *domain.Mission) any { return m.Persona }),
	one("capabilities", func(m *domain.Mission) any { return jsonText(orEmpty(m.Capabilities)) }),
	one("write_area", func(m *domain.Mission) any { return jsonOrNull(m.WriteArea) }),
	one("model_policy", func(m *domain.Mission) any { return jsonText(m.ModelPolicy) }),
	one("workspace", func(m *domain.Mission) any { return m.Workspace }),
	one("review", func(m *domain.Mission) any { return m.Review }),
	one("acceptance", func(m *domain.Mission) any { return jsonText(orEmpty(m.AcceptanceCriteria)) }),
	one("deadline", func(m *domain.Mission) any { return ms(m.Deadline) }),
	one("retry_budget", func(m *domain.Mission) any { return m.RetryBudget }),
	one("cost_limit_usd", func(m *domain.Mission) any { return m.CostLimitUSD }),
	one("state", func(m *domain.Mission) any { return string(m.State) }),
	one("attempt", func(m *domain.Mission) any { return m.Attempt }),
	one("attempts_used", func(m *domain.Mission) any { return m.AttemptsUsed }),
	one("epoch", func(m *domain.Mission) any { return m.Lease.Epoch }),
	one("lease_owner", func(m *domain.Mission) any { return nullStr(m.Lease.Owner) }),
	one("lease_expires_at", func(m *domain.Mission) any { return ms(m.Lease.ExpiresAt) }),
	one("profile", func(m *domain.Mission) any { return m.Profile }),
	one("not_before", func(m *domain.Mission) any { return ms0(m.NotBefore) }),
	one("wait_reason", func(m *domain.Mission) any { return m.WaitReason }),
	one("preempt", func(m *domain.Mission) any { return boolInt(m.Preempt) }),
	one("serial", func(m *domain.Mission) any { return boolInt(m.Serial) }),
	one("checkpoint", func(m *domain.Mission) any { return jsonOrNull(m.Checkpoint) }),
	one("progress", func(m *domain.Mission) any { return jsonOrNull(m.Progress) }),
	one("result", func(m *domain.Mission) any { return jsonOrNull(m.Result) }),
	one("last_failure", func(m *domain.Mission) any { return jsonOrNull(m.LastFailure) }),
	one("last_signature", func(m *domain.Mission) any { return m.LastSignature }),
	one("decision", func(m *domain.Mission) any { return jsonOrNull(m.Decision) }),
	one("landing", func(m *domain.Mission) any { return string(m.Landing) }),
	one("skipped", func(m *domain.Mission) any { return boolInt(m.Skipped) }),
	{cols: []string{"input_tokens", "output_tokens", "cost_usd"}, args: func(m *domain.Mission) []any {
		return []any{m.Usage.InputTokens, m.Usage.OutputTokens, m.Usage.CostUSD}
	}},
	one("escalation_id", func(m *domain.Mission) any { return nullStr(m.EscalationID) }),
	one("deadline_escalated", func(m *domain.Mission) any { return boolInt(m.DeadlineEscalated) }),
	one("run", func(m *domain.Mission) any { return jsonOrNull(m.Run) }),
	one("updated_at", func(m *domain.Mission) any { return ms(m.UpdatedAt) }),
	one("started_at", func(m *domain.Mission) any { return ms(m.StartedAt) }),
	one("finished_at", func(m *domain.Mission) any { return ms(m.FinishedAt) }),
	one("contacted", func(m *domain.Mission) any { return boolInt(m.Contacted) }),
	one("abandons", func(m *domain.Mission) any { return m.Abandons }),
	one("node", func(m *domain.Mission) any { return m.Node }),
}

// The table must have one entry per field bit.
var _ = [1]struct{}{}[len(setCols)-bits.Len64(uint64(engine.AllMissionFields))]

// setSQL caches the statement text of each field set (a transition writes the same set every
// time, so there are a few dozen texts; pgx prepares each once per connection).
var setSQL sync.Map // engine.MissionFields → string

// missionSetSQL is the guarded UPDATE of the columns of set: $1… the values in setCols'
// order, then id, state and epoch.
func missionSetSQL(set engine.MissionFields) string {
	if q, ok := setSQL.Load(set); ok {
		return q.(string)
	}
	var b strings.Builder
	b.WriteString("UPDATE missions SET ")
	n := 0
	for i := range setCols {
		if set&(1<<i) == 0 {
			continue
		}
		for _, c := range setCols[i].cols {
			if n > 0 {
				b.WriteString(", ")
			}
			n++
			fmt.Fprintf(&b, "%s = $%d", c, n)
		}
	}
	fmt.Fprintf(&b, " WHERE id = $%d AND state = $%d AND epoch = $%d", n+1, n+2, n+3)
	q := b.String()
	setSQL.Store(set, q)
	return q
}

// MissionSet writes the fields c.Set of c.Row in one guarded statement (engine.Tx). A guard
// miss matches no row, which is ErrGuard and no failed statement: the transaction stays usable.
func (t *txn) MissionSet(ctx context.Context, c engine.MissionChange) error {
	set := c.Set & engine.AllMissionFields
	what := "update mission " + c.Row.ID
	if set == 0 {
		return nil
	}
	args := make([]any, 0, bits.OnesCount64(uint64(set))+5)
	for i := range setCols {
		if set&(1<<i) != 0 {
			args = append(args, setCols[i].args(c.Row)...)
		}
	}
	args = append(args, c.Row.ID, string(c.From.State), c.From.Epoch)
	tag, err := t.q.Exec(ctx, missionSetSQL(set), args...)
	if err != nil {
		return translate(err, what)
	}
	return guarded(tag, what)
}

package engine

import (
	"context"
	"fmt"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"slices"
	"time"
)

// MissionPatch changes fields of a mission; nil fields stay as they are.
//
// Which fields may change depends on the state (the rule, also in docs/state-machine.md):
//   - any state but terminal: priority, deadline, retry_budget, cost_limit_usd, token_limit;
//   - pending, interrupted or blocked only (nobody works on it): also title, brief, persona,
//     capabilities, write_area, acceptance_criteria, review, model_policy, target_branch;
//   - completed, failed, cancelled: nothing (retry it first).
type MissionPatch struct {
	Title              *string             `json:"title,omitempty"`
	Brief              *string             `json:"brief,omitempty"`
	Priority           *int                `json:"priority,omitempty"`
	Persona            *string             `json:"persona,omitempty"`
	Capabilities       *[]string           `json:"capabilities,omitempty"`
	WriteArea          *[]string           `json:"write_area,omitempty"`
	AcceptanceCriteria *[]string           `json:"acceptance_criteria,omitempty"`
	Deadline           *time.Time          `json:"deadline,omitempty"`
	RetryBudget        *int                `json:"retry_budget,omitempty"`
	Review             *string             `json:"review,omitempty"`
	ModelPolicy        *domain.ModelPolicy `json:"model_policy,omitempty"`
	CostLimitUSD       *float64            `json:"cost_limit_usd,omitempty"`
	TargetBranch       *string             `json:"target_branch,omitempty"`
	// TokenLimit caps the mission's input plus output tokens (0: none); stored apart from
	// the mission's row (Tx.MissionTokenLimitSet).
	TokenLimit *int64 `json:"token_limit,omitempty"`
}

// fields lists the patch's set fields: those allowed in any live state, then the others.
func (p MissionPatch) fields() (live, idle []string) {
	set := func(ok bool, name string, into *[]string) {
		if ok {
			*into = append(*into, name)
		}
	}
	set(p.Priority != nil, "priority", &live)
	set(p.Deadline != nil, "deadline", &live)
	set(p.RetryBudget != nil, "retry_budget", &live)
	set(p.CostLimitUSD != nil, "cost_limit_usd", &live)
	set(p.TokenLimit != nil, "token_limit", &live)
	set(p.Title != nil, "title", &idle)
	set(p.Brief != nil, "brief", &idle)
	set(p.Persona != nil, "persona", &idle)
	set(p.Capabilities != nil, "capabilities", &idle)
	set(p.WriteArea != nil, "write_area", &idle)
	set(p.AcceptanceCriteria != nil, "acceptance_criteria", &idle)
	set(p.Review != nil, "review", &idle)
	set(p.ModelPolicy != nil, "model_policy", &idle)
	set(p.TargetBranch != nil, "target_branch", &idle)
	return live, idle
}

// UpdateMission applies patch under the rule of MissionPatch, re-validating the result.
func (e *Engine) UpdateMission(ctx context.Context, id string, patch MissionPatch, actor string) (domain.Mission, error) {
	var m domain.Mission
	if err := domain.CheckID("mission_id", domain.PrefixMission, id); err != nil {
		return m, err
	}
	live, idle := patch.fields()
	if len(live)+len(idle) == 0 {
		return m, domain.Invalid("patch", "changes nothing", "give at least one field to change")
	}
	if patch.TokenLimit != nil && *patch.TokenLimit < 0 {
		return m, domain.Invalid("token_limit", "is negative", "use 0 for no limit")
	}
	if patch.Priority != nil { // 0 would read as "the default" once applied to the spec
		if err := CheckPriority("priority", *patch.Priority); err != nil {
			return m, err
		}
	}
	err := e.update(ctx, actor, func(o *op) error {
		var err error
		if m, err = o.get(id); err != nil {
			return err
		}
		if m.State.Terminal() {
			return domain.Invalid(live0(live, idle), fmt.Sprintf("mission %s is %s and cannot change", id, m.State), "retry_mission first")
		}
		if len(idle) > 0 && (m.State == domain.StateLeased || m.State == domain.StateRunning) {
			return domain.Invalid(idle[0], fmt.Sprintf("cannot change while the mission is %s", m.State),
				"only priority, deadline, retry_budget, cost_limit_usd and token_limit change during a run; cancel or wait")
		}
		if err := o.patch(&m, patch, append(live, idle...)); err != nil {
			return err
		}
		if patch.TokenLimit != nil {
			if err := o.tx.MissionTokenLimitSet(o.ctx, m.ID, *patch.TokenLimit); err != nil {
				return err
			}
		}
		if patch.CostLimitUSD == nil && patch.TokenLimit == nil {
			return nil
		}
		if err := o.resumeBudgetBlocked(&m); err != nil {
			return err
		}
		m, err = o.get(id)
		return err
	})
	return m, err
}

func live0(live, idle []string) string {
	if len(live) > 0 {
		return live[0]
	}
	return idle[0]
}

func (o *op) patch(m *domain.Mission, p MissionPatch, fields []string) error {
	spec := MissionSpec{Title: m.Title, Brief: m.Brief, Repository: m.Repository, TargetBranch: m.TargetBranch,
		Priority: m.Priority, Persona: m.Persona, Capabilities: m.Capabilities, WriteArea: m.WriteArea,
		ModelPolicy: m.ModelPolicy, Workspace: m.Workspace, Review: m.Review, AcceptanceCriteria: m.AcceptanceCriteria,
		RetryBudget: &m.RetryBudget, CostLimitUSD: m.CostLimitUSD, Kind: m.Kind, titleStored: p.Title == nil}
	applyPatch(&spec, p)
	if p.Deadline != nil {
		spec.Deadline = *p.Deadline
	}
	if err := spec.normalise("", o.now); err != nil {
		return err
	}
	oldArea := m.WriteArea
	g := Guard{State: m.State, Epoch: m.Lease.Epoch}
	m.Title, m.Brief, m.TargetBranch, m.Priority, m.Persona = spec.Title, spec.Brief, spec.TargetBranch, spec.Priority, spec.Persona
	m.Capabilities, m.WriteArea, m.ModelPolicy, m.Review = spec.Capabilities, spec.WriteArea, spec.ModelPolicy, spec.Review
	m.AcceptanceCriteria, m.RetryBudget, m.CostLimitUSD, m.Deadline = spec.AcceptanceCriteria, *spec.RetryBudget, spec.CostLimitUSD, spec.Deadline
	if p.Deadline != nil {
		m.DeadlineEscalated = false
	}
	m.UpdatedAt = o.now
	if err := o.save(m, g); err != nil {
		return err
	}
	if err := o.emit("mission.updated", m, "", map[string]any{"fields": fields, "priority": m.Priority}); err != nil {
		return err
	}
	if p.WriteArea != nil && !slices.Equal(oldArea, m.WriteArea) {
		if err := o.detachWriteArea(m); err != nil {
			return err
		}
		return o.attachWriteArea(m)
	}
	return nil
}

func applyPatch(s *MissionSpec, p MissionPatch) {
	if p.Title != nil {
		s.Title = *p.Title
	}
	if p.Brief != nil {
		s.Brief = *p.Brief
	}
	if p.Priority != nil {
		s.Priority = *p.Priority
	}
	if p.Persona != nil {
		s.Persona = *p.Persona
	}
	if p.Capabilities != nil {
		s.Capabilities = *p.Capabilities
	}
	if p.WriteArea != nil {
		s.WriteArea = *p.WriteArea
	}
	if p.AcceptanceCriteria != nil {
		s.AcceptanceCriteria = *p.AcceptanceCriteria
	}
	if p.RetryBudget != nil {
		s.RetryBudget = p.RetryBudget
	}
	if p.Review != nil {
		s.Review = *p.Review
	}
	if p.ModelPolicy != nil {
		s.ModelPolicy = *p.ModelPolicy
	}
	if p.CostLimitUSD != nil {
		s.CostLimitUSD = *p.CostLimitUSD
	}
	if p.TargetBranch != nil {
		s.TargetBranch = *p.TargetBranch
	}
}

// SetPaused pauses (no new acquires) or resumes the scheduler. Running work goes on.
func (e *Engine) SetPaused(ctx context.Context, paused bool, reason, actor string) error {
	return e.update(ctx, actor, func(o *op) error {
		was, err := o.tx.Paused(o.ctx)
		if err != nil || was == paused {
			return err
		}
		if err := o.tx.SetPaused(o.ctx, paused); err != nil {
			return err
		}
		typ := "scheduler.resumed"
		if paused {
			typ = "scheduler.paused"
		}
		return o.emit(typ, nil, "", map[string]any{"reason": reason})
	})
}

// Paused reports whether the scheduler is paused.
func (e *Engine) Paused(ctx context.Context) (bool, error) {
	return viewValue(ctx, e, func(r Reader) (bool, error) { return r.Paused(ctx) })
}

// Purge deletes a terminal mission's row (and its edges); a mission.purged event stays in
// the log as its tombstone.
func (e *Engine) Purge(ctx context.Context, id, actor string) error {
	if err := domain.CheckID("mission_id", domain.PrefixMission, id); err != nil {
		return err
	}
	return e.update(ctx, actor, func(o *op) error {
		m, err := o.get(id)
		if err != nil {
			return err
		}
		if !m.State.Terminal() {
			return &domain.TransitionError{MissionID: id, Op: "purge", State: m.State}
		}
		if err := o.tx.MissionDelete(o.ctx, id); err != nil {
			return err
		}
		return o.emit("mission.purged", &m, "", map[string]any{"title": m.Title, "state": m.State})
	})
}

// Spawn creates child missions of a running parent (fan-out): they share its voyage and, by
// default, its repository and target branch. The parent then yields with WaitChildren and is
// resumed, ahead of fresh work, when all of them completed. Fenced by the parent's epoch.
func (e *Engine) Spawn(ctx context.Context, parent domain.Fence, specs []MissionSpec) ([]domain.Mission, error) {
	if len(specs) == 0 || len(specs) > MaxMissionsPerDispatch {
		return nil, domain.Invalid("missions", fmt.Sprintf("has %d missions", len(specs)), fmt.Sprintf("give 1 to %d", MaxMissionsPerDispatch))
	}
	var out []domain.Mission
	err := e.update(ctx, "", func(o *op) error {
		p, err := o.fenced(parent)
		if err != nil {
			return err
		}
		if p.State != domain.StateRunning {
			return &domain.TransitionError{MissionID: p.ID, Op: "spawn", State: p.State}
		}
		for i := range specs {
			s := specs[i]
			if s.Repository == "" {
				s.Repository = p.Repository
			}
			if s.TargetBranch == "" {
				s.TargetBranch = p.TargetBranch
			}
			path := fmt.Sprintf("missions[%d].", i)
			if err := e.prepareSpec(&s, path); err != nil {
				return err
			}
			s.ParentID = p.ID
			m, err := o.insertMission(s, p.VoyageID)
			if err != nil {
				return err
			}
			for j, dep := range s.DependsOn {
				if err := o.checkExisting(dep, fmt.Sprintf("%sdepends_on[%d]", path, j)); err != nil {
					return err
				}
				if err := o.addEdge(&m, domain.Dependency{MissionID: m.ID, DependsOn: dep, Type: domain.EdgeHard, Source: domain.SourceAgent}); err != nil {
					return err
				}
			}
			out = append(out, m)
		}
		return nil
	})
	return out, err
}

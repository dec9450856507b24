package engine

import (
	"context"
	"errors"
	"fmt"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"slices"
)

func isDuplicate(err error) bool { return errors.Is(err, domain.ErrDuplicateID) }

// Created is the answer to CreateMission: the mission, and whether this call created it
// (false: the idempotency key named an existing one).
type Created struct {
	Mission domain.Mission
	Created bool
}

// CreateMission validates spec, fills defaults and stores a new pending mission with its hard
// dependencies (spec.DependsOn, existing mission ids) and write-area conflicts, in one
// transaction. A repeated idempotency key returns the existing mission. A hard dependency that
// already failed or was cancelled makes the new mission blocked at once, with an escalation.
func (e *Engine) CreateMission(ctx context.Context, spec MissionSpec, actor string) (Created, error) {
	var out Created
	if err := e.prepareSpec(&spec, ""); err != nil {
		return out, err
	}
	err := e.update(ctx, actor, func(o *op) error {
		if spec.IdempotencyKey != "" {
			m, err := o.tx.MissionByIdempotencyKey(o.ctx, spec.IdempotencyKey)
			if err == nil {
				out = Created{Mission: m}
				return nil
			}
			if !errors.Is(err, domain.ErrNotFound) {
				return err
			}
		}
		if spec.VoyageID != "" {
			if err := o.checkVoyageOpen(spec.VoyageID, "voyage_id"); err != nil {
				return err
			}
		}
		m, err := o.insertMission(spec, spec.VoyageID)
		if err != nil {
			return err
		}
		for i, dep := range spec.DependsOn {
			if err := o.checkExisting(dep, fmt.Sprintf("depends_on[%d]", i)); err != nil {
				return err
			}
			if err := o.addEdge(&m, domain.Dependency{MissionID: m.ID, DependsOn: dep, Type: domain.EdgeHard, Source: domain.SourceUser}); err != nil {
				return err
			}
		}
		if err := o.blockIfUpstreamFailed(&m); err != nil {
			return err
		}
		out = Created{Mission: m, Created: true}
		return nil
	})
	return out, err
}

// prepareSpec normalises a spec (field names prefixed with path) and resolves its repository.
func (e *Engine) prepareSpec(s *MissionSpec, path string) error {
	if err := s.normalise(path, e.Now()); err != nil {
		return err
	}
	repo := s.Repository
	if repo == "" {
		repo = e.opt.DefaultRepository
	}
	if repo == "" {
		return domain.Invalid(path+"repository", "is empty and the server has no default repository",
			"name the git repository to work on (an absolute path, or a configured remote repository's name), or start the server inside one")
	}
	resolved, err := e.opt.ResolveRepository(repo)
	if err != nil {
		return domain.Invalid(path+"repository", err.Error(), "use one of the configured repositories")
	}
	s.Repository = resolved
	return nil
}

func (o *op) insertMission(s MissionSpec, voyageID string) (domain.Mission, error) {
	m := domain.Mission{
		ID: o.e.ids.next(domain.PrefixMission, o.now), VoyageID: voyageID, ParentID: s.ParentID,
		IdempotencyKey: s.IdempotencyKey, Key: s.Key, Title: s.Title, Brief: s.Brief,
		Repository: s.Repository, TargetBranch: s.TargetBranch, Priority: s.Priority, Kind: s.Kind,
		SubjectID: s.SubjectID, Persona: s.Persona, Capabilities: s.Capabilities, WriteArea: s.WriteArea,
		ModelPolicy: s.ModelPolicy, Workspace: s.Workspace, Review: s.Review,
		AcceptanceCriteria: s.AcceptanceCriteria, Deadline: s.Deadline, RetryBudget: *s.RetryBudget,
		CostLimitUSD: s.CostLimitUSD, State: domain.StatePending, Landing: domain.LandingNone,
		CreatedAt: o.now, UpdatedAt: o.now,
	}
	if err := o.tx.MissionInsert(o.ctx, &m); err != nil {
		return m, err
	}
	if s.TokenLimit > 0 {
		if err := o.tx.MissionTokenLimitSet(o.ctx, m.ID, s.TokenLimit); err != nil {
			return m, err
		}
	}
	if err := o.emit("mission.created", &m, "", missionCreatedData(&m)); err != nil {
		return m, err
	}
	return m, o.attachWriteArea(&m)
}

// missionCreatedData is the mission as created: replay starts from it.
func missionCreatedData(m *domain.Mission) map[string]any {
	return map[string]any{"to": m.State, "title": m.Title, "priority": m.Priority, "kind": m.Kind,
		"repository": m.Repository, "persona": m.Persona, "write_area": m.WriteArea, "key": m.Key,
		"parent_id": m.ParentID, "subject_id": m.SubjectID, "retry_budget": m.RetryBudget}
}

func (o *op) checkExisting(id, field string) error {
	if err := domain.CheckID(field, domain.PrefixMission, id); err != nil {
		return err
	}
	if _, err := o.tx.MissionGet(o.ctx, id); err != nil {
		if errors.Is(err, domain.ErrNotFound) {
			return fmt.Errorf("%s: %w: %s does not exist (list missions with list_missions)", field, domain.ErrUnknownMission, id)
		}
		return err
	}
	return nil
}

func (o *op) checkVoyageOpen(id, field string) error {
	if err := domain.CheckID(field, domain.PrefixVoyage, id); err != nil {
		return err
	}
	v, err := o.tx.VoyageGet(o.ctx, id)
	if errors.Is(err, domain.ErrNotFound) {
		return &domain.NotFoundError{Kind: "voyage", ID: id}
	}
	if err != nil {
		return err
	}
	if v.State == domain.VoyageCompleted || v.State == domain.VoyageCancelled {
		return domain.Invalid(field, fmt.Sprintf("voyage %s is %s", id, v.State), "dispatch a new voyage instead")
	}
	return nil
}

// addEdge stores one dependency with its event.
func (o *op) addEdge(m *domain.Mission, d domain.Dependency) error {
	d.CreatedAt = o.now
	if d.Source == "" {
		d.Source = domain.SourceUser
	}
	if err := o.tx.DependencyInsert(o.ctx, d); err != nil {
		if isDuplicate(err) {
			return domain.Invalid("edges", fmt.Sprintf("the %s edge %s → %s is given twice", d.Type, d.MissionID, d.DependsOn), "give each edge once")
		}
		return err
	}
	return o.emit("dependency.added", m, "", map[string]any{"depends_on": d.DependsOn, "type": d.Type,
		"reason": d.Reason, "source": d.Source})
}

// blockIfUpstreamFailed blocks a new mission whose hard dependency already failed or was
// cancelled (it could never run).
func (o *op) blockIfUpstreamFailed(m *domain.Mission) error {
	deps, err := o.tx.DependenciesOf(o.ctx, m.ID)
	if err != nil {
		return err
	}
	for _, d := range deps {
		if d.Type != domain.EdgeHard {
			continue
		}
		u, err := o.get(d.DependsOn)
		if err != nil {
			return err
		}
		if u.State == domain.StateFailed || u.State == domain.StateCancelled {
			return o.blockForUpstream([]*domain.Mission{m}, &u)
		}
	}
	return nil
}

// orderingCycle finds a cycle among edges (mission → depends_on) of ordering types, returning
// it as a path whose first element repeats at the end; nil when there is none. Nodes are
// visited in sorted order so the reported cycle is deterministic.
func orderingCycle(edges []domain.Dependency) []string {
	next := map[string][]string{}
	for _, d := range edges {
		if d.Type.Ordering() {
			next[d.MissionID] = append(next[d.MissionID], d.DependsOn)
		}
	}
	nodes := make([]string, 0, len(next))
	for n := range next {
		nodes = append(nodes, n)
		slices.Sort(next[n])
	}
	slices.Sort(nodes)
	const (
		white = iota
		grey
		black
	)
	color := map[string]int{}
	var stack []string
	var found []string
	var visit func(n string) bool
	visit = func(n string) bool {
		color[n] = grey
		stack = append(stack, n)
		for _, m := range next[n] {
			switch color[m] {
			case grey:
				i := slices.Index(stack, m)
				found = append(slices.Clone(stack[i:]), m)
				return true
			case white:
				if visit(m) {
					return true
				}
			}
		}
		stack = stack[:len(stack)-1]
		color[n] = black
		return false
	}
	for _, n := range nodes {
		if color[n] == white && visit(n) {
			return found
		}
	}
	return nil
}

package engine

import (
	"context"
	"errors"
	"fmt"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"strings"
	"unicode/utf8"
)

// VoyageSpec is a voyage to dispatch: its missions (each with a client Key) and the edges
// between them. Edges and MissionSpec.DependsOn refer to client keys or to existing mission
// ids. Priority, Repository and TargetBranch are defaults for missions that give none.
type VoyageSpec struct {
	IdempotencyKey string        `json:"idempotency_key,omitempty"`
	Title          string        `json:"title"`
	Goal           string        `json:"goal,omitempty"`
	Repository     string        `json:"repository,omitempty"`
	TargetBranch   string        `json:"target_branch,omitempty"`
	Priority       int           `json:"priority,omitempty"`
	CostLimitUSD   float64       `json:"cost_limit_usd,omitempty"`
	TokenLimit     int64         `json:"token_limit,omitempty"` // input plus output tokens of the whole voyage; 0: none
	Missions       []MissionSpec `json:"missions"`
	Edges          []EdgeSpec    `json:"edges,omitempty"`
}

// EdgeSpec is one dependency in a dispatch: Mission (a client key of this dispatch) depends
// on DependsOn (a client key or an existing mission id) with Type (default hard).
type EdgeSpec struct {
	Mission   string          `json:"mission"`
	DependsOn string          `json:"depends_on"`
	Type      domain.EdgeType `json:"type,omitempty"`
	Reason    string          `json:"reason,omitempty"`
	Source    string          `json:"source,omitempty"`

	// field and dependsField name the caller's fields in errors: edges[i] and
	// edges[i].depends_on, or missions[i] and missions[i].depends_on[j] for the shorthand.
	field, dependsField string
}

// Dispatched is the answer to Dispatch: the voyage, each client key's mission id, and
// whether this call created them (false: the idempotency key named an existing voyage).
type Dispatched struct {
	Voyage   domain.Voyage     `json:"voyage"`
	IDs      map[string]string `json:"ids"`
	Created  bool              `json:"created"`
	Missions []domain.Mission  `json:"missions"`
}

// MaxMissionsPerDispatch bounds one dispatch call.
const MaxMissionsPerDispatch = 500

// Dispatch creates a voyage with its missions and edges atomically: either all of it is
// stored or nothing. Unknown keys or ids are rejected (ErrUnknownMission) and cycles over
// hard, soft and serialization edges are rejected naming the cycle (ErrCycle).
func (e *Engine) Dispatch(ctx context.Context, spec VoyageSpec, actor string) (Dispatched, error) {
	var out Dispatched
	if err := e.prepareVoyage(&spec); err != nil {
		return out, err
	}
	edges, err := collectEdges(spec)
	if err != nil {
		return out, err
	}
	err = e.update(ctx, actor, func(o *op) error {
		if spec.IdempotencyKey != "" {
			v, err := o.tx.VoyageByIdempotencyKey(o.ctx, spec.IdempotencyKey)
			if err == nil {
				out, err = o.existingDispatch(v)
				return err
			}
			if !errors.Is(err, domain.ErrNotFound) {
				return err
			}
		}
		out, err = o.dispatch(spec, edges)
		return err
	})
	return out, err
}

func (e *Engine) prepareVoyage(spec *VoyageSpec) error {
	spec.Title = strings.TrimSpace(spec.Title)
	if spec.Title == "" || utf8.RuneCountInString(spec.Title) > MaxTitleLen {
		return domain.Invalid("title", "must be 1 to 200 characters", "name the voyage's goal in a few words")
	}
	if err := checkTitle("title", spec.Title); err != nil {
		return err
	}
	if len(spec.Goal) > MaxBriefBytes {
		return domain.Invalid("goal", "is too long", fmt.Sprintf("at most %d bytes", MaxBriefBytes))
	}
	if spec.IdempotencyKey != "" && !keyPattern.MatchString(spec.IdempotencyKey) {
		return domain.Invalid("idempotency_key", "must be 1-64 characters of A-Z a-z 0-9 _ . : -", "")
	}
	if len(spec.Missions) == 0 || len(spec.Missions) > MaxMissionsPerDispatch {
		return domain.Invalid("missions", fmt.Sprintf("has %d missions", len(spec.Missions)), fmt.Sprintf("give 1 to %d", MaxMissionsPerDispatch))
	}
	if spec.CostLimitUSD < 0 {
		return domain.Invalid("cost_limit_usd", "is negative", "use 0 for no limit")
	}
	if spec.TokenLimit < 0 {
		return domain.Invalid("token_limit", "is negative", "use 0 for no limit")
	}
	keys := map[string]bool{}
	for i := range spec.Missions {
		m := &spec.Missions[i]
		path := fmt.Sprintf("missions[%d].", i)
		if err := domain.CheckName(path+"key", "keys", m.Key); err != nil {
			return err
		}
		if !keyPattern.MatchString(m.Key) {
			return domain.Invalid(path+"key", fmt.Sprintf("%q is not a client key", domain.Clip(m.Key, 40)), "give every mission a short unique key such as api or docs")
		}
		if keys[m.Key] {
			return fmt.Errorf("%skey: %w: %q is used by two missions", path, domain.ErrDuplicateID, m.Key)
		}
		keys[m.Key] = true
		if m.Repository == "" {
			m.Repository = spec.Repository
		}
		if m.TargetBranch == "" {
			m.TargetBranch = spec.TargetBranch
		}
		if m.Priority == 0 {
			m.Priority = spec.Priority
		}
		if m.IdempotencyKey != "" || m.VoyageID != "" {
			return domain.Invalid(path+"idempotency_key", "is set per voyage in a dispatch", "put idempotency_key on the voyage")
		}
		if err := e.prepareSpec(m, path); err != nil {
			return err
		}
	}
	if spec.Repository == "" {
		spec.Repository = spec.Missions[0].Repository
	} else {
		r, err := e.opt.ResolveRepository(spec.Repository)
		if err != nil {
			return domain.Invalid("repository", err.Error(), "use one of the configured repositories")
		}
		spec.Repository = r
	}
	return nil
}

// collectEdges gathers DependsOn shorthands and Edges into edge specs, checking fields.
func collectEdges(spec VoyageSpec) ([]EdgeSpec, error) {
	var edges []EdgeSpec
	for i, m := range spec.Missions {
		for j, d := range m.DependsOn {
			edges = append(edges, EdgeSpec{Mission: m.Key, DependsOn: d, Type: domain.EdgeHard, Source: domain.SourceUser,
				field: fmt.Sprintf("missions[%d]", i), dependsField: fmt.Sprintf("missions[%d].depends_on[%d]", i, j)})
		}
	}
	for i, e := range spec.Edges {
		f := fmt.Sprintf("edges[%d]", i)
		e.field, e.dependsField = f, f+".depends_on"
		if e.Type == "" {
			e.Type = domain.EdgeHard
		}
		if !e.Type.Valid() {
			return nil, domain.Invalid(f+".type", fmt.Sprintf("%q is not an edge type", domain.Clip(string(e.Type), 40)), "use hard, soft, conflict or serialization")
		}
		switch e.Source {
		case "":
			e.Source = domain.SourceUser
		case domain.SourceUser, domain.SourceArchitect, domain.SourceAgent, domain.SourceSystem:
		default:
			return nil, domain.Invalid(f+".source", fmt.Sprintf("%q is not an edge source", domain.Clip(e.Source, 40)), "use user, architect, agent or system")
		}
		if len(e.Reason) > 1000 {
			return nil, domain.Invalid(f+".reason", "is too long", "at most 1000 bytes")
		}
		edges = append(edges, e)
	}
	return edges, nil
}

func (o *op) dispatch(spec VoyageSpec, edges []EdgeSpec) (Dispatched, error) {
	v := domain.Voyage{ID: o.e.ids.next(domain.PrefixVoyage, o.now), IdempotencyKey: spec.IdempotencyKey, Title: spec.Title,
		Goal: spec.Goal, Repository: spec.Repository, TargetBranch: spec.TargetBranch, State: domain.VoyageOpen,
		CostLimitUSD: spec.CostLimitUSD, TokenLimit: spec.TokenLimit, CreatedAt: o.now, UpdatedAt: o.now}
	if err := o.tx.VoyageInsert(o.ctx, &v); err != nil {
		return Dispatched{}, err
	}
	out := Dispatched{Voyage: v, IDs: map[string]string{}, Created: true}
	if err := o.emit("voyage.created", nil, v.ID, map[string]any{"title": v.Title, "missions": len(spec.Missions)}); err != nil {
		return out, err
	}
	byKey := map[string]*domain.Mission{}
	for _, ms := range spec.Missions {
		m, err := o.insertMission(ms, v.ID)
		if err != nil {
			return out, err
		}
		out.Missions = append(out.Missions, m)
		out.IDs[m.Key] = m.ID
	}
	for i := range out.Missions {
		byKey[out.Missions[i].Key] = &out.Missions[i]
	}
	deps, err := o.resolveEdges(edges, byKey)
	if err != nil {
		return out, err
	}
	if cyc := orderingCycle(deps); cyc != nil {
		return out, &domain.CycleError{Cycle: keysOf(cyc, byKey)}
	}
	for _, d := range deps {
		if err := o.addEdge(byKey[keyOf(d.MissionID, byKey)], d); err != nil {
			return out, err
		}
	}
	for i := range out.Missions {
		if err := o.blockIfUpstreamFailed(&out.Missions[i]); err != nil {
			return out, err
		}
	}
	return out, nil
}

func (o *op) resolveEdges(edges []EdgeSpec, byKey map[string]*domain.Mission) ([]domain.Dependency, error) {
	var deps []domain.Dependency
	for i, e := range edges {
		f, df := e.field, e.dependsField
		if f == "" { // edges built by the engine itself
			f = fmt.Sprintf("edges[%d]", i)
			df = f + ".depends_on"
		}
		from, ok := byKey[e.Mission]
		if !ok {
			return nil, fmt.Errorf("%s.mission: %w: %q is not a key of this dispatch (edges start at a new mission)", f, domain.ErrUnknownMission, domain.Clip(e.Mission, 80))
		}
		to := e.DependsOn
		if m, ok := byKey[to]; ok {
			to = m.ID
		} else if err := o.checkExisting(to, df); err != nil {
			if errors.Is(err, domain.ErrInvalid) {
				return nil, fmt.Errorf("%s: %w: %q is neither a key of this dispatch nor a mission id", df, domain.ErrUnknownMission, domain.Clip(to, 80))
			}
			return nil, err
		}
		if to == from.ID {
			return nil, &domain.CycleError{Cycle: []string{e.Mission, e.Mission}}
		}
		deps = append(deps, domain.Dependency{MissionID: from.ID, DependsOn: to, Type: e.Type, Reason: e.Reason, Source: e.Source})
	}
	return deps, nil
}

func keyOf(id string, byKey map[string]*domain.Mission) string {
	for k, m := range byKey {
		if m.ID == id {
			return k
		}
	}
	return id
}

func keysOf(ids []string, byKey map[string]*domain.Mission) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = keyOf(id, byKey)
	}
	return out
}

func (o *op) existingDispatch(v domain.Voyage) (Dispatched, error) {
	ms, err := o.tx.VoyageMissions(o.ctx, v.ID)
	if err != nil {
		return Dispatched{}, err
	}
	out := Dispatched{Voyage: v, IDs: map[string]string{}, Missions: ms}
	for _, m := range ms {
		if m.Key != "" {
			out.IDs[m.Key] = m.ID
		}
	}
	return out, nil
}

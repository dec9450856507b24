package planner

import (
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"slices"
)

// Candidate is one agent profile (or external agent) that could take a mission, with what
// the scheduler knows about it.
type Candidate struct {
	Name             string
	Capabilities     []string
	Personas         []string // allowed personas; empty = any
	PreferredPersona string
	Load             float64 // running / max concurrency, in [0, 1]
	Confidence       float64 // observed success rate for this capability/persona, or the declared prior
}

// Eligible reports whether c may take m at all: every capability m requires is offered, and
// m's persona is allowed (the hard filters).
func Eligible(m *domain.Mission, c Candidate) bool {
	for _, need := range m.Capabilities {
		if !slices.Contains(c.Capabilities, need) {
			return false
		}
	}
	return m.Persona == "" || len(c.Personas) == 0 || slices.Contains(c.Personas, m.Persona)
}

// ScoreCandidate computes c's score for m. Capability overlap is the share of c's
// capabilities that m asks for (1 when m asks for none), so a specialist beats a generalist;
// the priority boost grows as priority gets more urgent: (100 − priority)/100, floored at 0.
func ScoreCandidate(m *domain.Mission, c Candidate) domain.Score {
	overlap := 1.0
	if len(m.Capabilities) > 0 && len(c.Capabilities) > 0 {
		overlap = float64(len(m.Capabilities)) / float64(len(c.Capabilities))
		if overlap > 1 {
			overlap = 1
		}
	}
	load := min(max(c.Load, 0), 1)
	boost := max(float64(100-m.Priority)/100, 0)
	s := domain.Score{Profile: c.Name, CapabilityOverlap: overlap, Load: load, Confidence: c.Confidence,
		PriorityBoost: boost, PreferredPersona: m.Persona != "" && c.PreferredPersona == m.Persona}
	s.Total = overlap * (1 - load) * c.Confidence * (1 + boost)
	return s
}

// Assign picks the candidate for m: hard filters first, then a candidate whose preferred
// persona is m's persona, then the highest score; ties go to the earlier candidate
// (deterministic). It returns every eligible score for the record and ok=false when no
// candidate is eligible.
func Assign(m *domain.Mission, cands []Candidate) (best domain.Score, all []domain.Score, ok bool) {
	for _, c := range cands {
		if !Eligible(m, c) {
			continue
		}
		s := ScoreCandidate(m, c)
		all = append(all, s)
		if !ok || better(s, best) {
			best, ok = s, true
		}
	}
	return best, all, ok
}

func better(a, b domain.Score) bool {
	if a.PreferredPersona != b.PreferredPersona {
		return a.PreferredPersona
	}
	return a.Total > b.Total
}

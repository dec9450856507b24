package domain

import "slices"

// Edge is one legal move of a state machine: From → To by one of Ops. The mission's, the
// landing's and the voyage's tables are slices of it (Transition, LandingTransition,
// VoyageTransition), so that one rule decides for all three.
type Edge[S, O comparable] struct {
	From, To S
	Ops      []O
}

// allows reports whether op may move from one state to another under table.
func allows[S, O comparable](table []Edge[S, O], from, to S, op O) bool {
	for _, e := range table {
		if e.From == from && e.To == to && slices.Contains(e.Ops, op) {
			return true
		}
	}
	return false
}

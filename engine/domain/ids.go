package domain

import (
	"fmt"
	"regexp"
)

// ID prefixes: ids are "<prefix>_<ULID>", sortable by creation time.
const (
	PrefixMission    = "msn"
	PrefixVoyage     = "vyg"
	PrefixEscalation = "esc"
	PrefixAgent      = "agt"
)

var idPattern = regexp.MustCompile(`^[a-z]{3}_[0-9A-HJKMNP-TV-Z]{26}$`)

// ValidID reports whether s is an id the engine could have made with the given prefix. Ids
// are checked before any lookup so that nothing built from an id (paths, branch names) can
// escape its directory or be read as an option.
func ValidID(prefix, s string) bool {
	return len(s) == len(prefix)+27 && s[:len(prefix)] == prefix && idPattern.MatchString(s)
}

// CheckID returns a *FieldError for field when s is not an id with the given prefix, naming
// what kind of id it wants and where to copy one from (idKinds).
func CheckID(field, prefix, s string) error {
	if !ValidID(prefix, s) {
		k := kindOfID(prefix)
		return Invalid(field, fmt.Sprintf("%q is not %s id", Clip(s, 80), k.article),
			k.name+" ids look like "+prefix+"_01JD5Z8Q6X3V4W5Y6Z7A8B9C0D; "+k.where)
	}
	return nil
}

// VoyageIDSource says where an MCP client finds a voyage id, in the hint of a bad one (the
// command line tells it in its own words: cmd/mcp-scheduler/cliwords.go).
const VoyageIDSource = "dispatch's answer or a mission's voyage_id (get_mission)"

// idKind is what an id prefix names, for messages: "a mission", and where a caller finds
// one.
type idKind struct{ name, article, where string }

var idKinds = map[string]idKind{
	PrefixMission:    {"mission", "a mission", "copy one from list_missions or voyage_status"},
	PrefixVoyage:     {"voyage", "a voyage", "copy one from " + VoyageIDSource},
	PrefixEscalation: {"escalation", "an escalation", "copy one from list_escalations"},
	PrefixAgent:      {"agent", "an agent", "copy one from list_agents"},
}

func kindOfID(prefix string) idKind {
	if k, ok := idKinds[prefix]; ok {
		return k
	}
	return idKind{prefix, "a " + prefix, "copy one from the answer that named it"}
}

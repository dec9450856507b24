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

func CheckID(field, prefix, s string) error {
	if !ValidID(prefix, s) {
		return Invalid(field, fmt.Sprintf("%q is not a %s id", Clip(s, 80), prefix),
			"ids look like "+prefix+"_01JD5Z8Q6X3V4W5Y6Z7A8B9C0D; copy one from list_missions or voyage_status")
	}
	return nil
}

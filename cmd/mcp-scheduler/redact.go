package main

import (
	"slices"
	"strings"
)

// redacted replaces a secret value in what the server shows (agent logs).
const redacted = "[REDACTED]"

// redactor hides the values of the profiles' secret_env variables (API keys, as set in the
// server's environment) from agent logs returned by get_mission_log and mission://{id}/log.
// Values shorter than four bytes are ignored; the longest secret is replaced first. (The
// runner's agent.Redactor applies the same rule to what it records; once it is on main this
// can use it.)
func (a *app) redactor() func(string) string {
	var vals []string
	for _, p := range a.cfg.Profiles {
		for _, name := range p.SecretEnv {
			if v := a.env(name); len(v) >= 4 {
				vals = append(vals, v)
			}
		}
	}
	if len(vals) == 0 {
		return nil
	}
	slices.SortFunc(vals, func(x, y string) int { return len(y) - len(x) })
	vals = slices.Compact(vals)
	pairs := make([]string, 0, 2*len(vals))
	for _, v := range vals {
		pairs = append(pairs, v, redacted)
	}
	return strings.NewReplacer(pairs...).Replace
}

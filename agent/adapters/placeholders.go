package adapters

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
)

// Placeholder names accepted in profile argv elements, extra_args, mcp_config and set_env
// values (agent.Profile.Command documents them).
var placeholderNames = []string{
	"workspace", "mission_id", "attempt", "epoch", "brief_file", "model", "mcp_scheduler",
}

var placeholderPattern = regexp.MustCompile(`\{[a-z_]+\}`)

// placeholders substitutes {name} tokens inside single strings. Substitution is one pass:
// a substituted value is never expanded again, so a mission id that itself contains
// "{workspace}" stays literal.
type placeholders struct {
	replacer *strings.Replacer
	known    map[string]bool
}

func newPlaceholders(p agent.Profile, req agent.LaunchRequest) placeholders {
	values := map[string]string{
		"workspace":     req.Start.Workspace,
		"mission_id":    req.Start.MissionID,
		"attempt":       strconv.Itoa(req.Start.Attempt),
		"epoch":         strconv.FormatInt(req.Start.Epoch, 10),
		"brief_file":    req.BriefFile,
		"model":         effectiveModel(p, req),
		"mcp_scheduler": req.Self,
	}
	pairs := make([]string, 0, 2*len(values))
	known := make(map[string]bool, len(values))
	for _, name := range placeholderNames {
		pairs = append(pairs, "{"+name+"}", values[name])
		known["{"+name+"}"] = true
	}
	return placeholders{replacer: strings.NewReplacer(pairs...), known: known}
}

// expand substitutes the placeholders of s. A token that looks like a placeholder but is not
// one ({workdir}) is an error: it is almost always a typo in the configuration.
func (ph placeholders) expand(p agent.Profile, field, s string) (string, error) {
	if !strings.ContainsRune(s, '{') {
		return s, nil
	}
	for _, tok := range placeholderPattern.FindAllString(s, -1) {
		if !ph.known[tok] {
			return "", badProfile(p, "%s %q: unknown placeholder %s (known: {%s})",
				field, s, tok, strings.Join(placeholderNames, "}, {"))
		}
	}
	return ph.replacer.Replace(s), nil
}

// expandAll expands every element of in, keeping element boundaries (never re-splitting).
func (ph placeholders) expandAll(p agent.Profile, field string, in []string) ([]string, error) {
	out := make([]string, 0, len(in))
	for _, s := range in {
		v, err := ph.expand(p, field, s)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// checkModel refuses an attempt whose effective model is not a model name (agent.CheckModel)
// before any argv, placeholder or configuration file holds it. The engine and the
// configuration refuse such names when they enter; this is the last gate before a process.
func checkModel(p agent.Profile, req agent.LaunchRequest) error {
	if m := req.Start.Model; m != "" {
		if err := agent.CheckModel(m); err != nil {
			return fmt.Errorf("mission %s: model %w", req.Start.MissionID, err)
		}
	}
	for i, m := range p.Models { // the first one may go into a CLI's configuration file
		if err := agent.CheckModel(m); err != nil {
			return badProfile(p, "models[%d] %v", i, err)
		}
	}
	return nil
}

// effectiveModel is the mission's model when it names one, else the profile's default (the
// first of Models), else "" (the CLI's own default).
func effectiveModel(p agent.Profile, req agent.LaunchRequest) string {
	if req.Start.Model != "" {
		return req.Start.Model
	}
	if len(p.Models) > 0 {
		return p.Models[0]
	}
	return ""
}

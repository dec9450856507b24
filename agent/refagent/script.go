package refagent

import (
	"github.com/mcp-scheduler/mcp-scheduler/agent"

	"fmt"
	"strconv"
	"strings"
	"time"
)

// directive is one parsed script line.
type directive struct {
	line int      // 1-based line in its source
	name string   // without the "@"
	args []string // fixed arguments
	text string   // the rest of the line (unquoted when it was a Go string literal)
}

// arity says, per directive, how many space-separated arguments come before the free text,
// whether free text is allowed, and how many arguments are optional.
type arity struct {
	args     int
	optional int // trailing arguments that may be missing
	text     bool
	state    bool // changes the agent's state rather than doing work: re-applied on resume
}

var directives = map[string]arity{
	"write":            {args: 1, text: true},
	"append":           {args: 1, text: true},
	"commit":           {text: true},
	"sleep":            {args: 1},
	"heartbeat":        {args: 1, state: true},
	"progress":         {args: 1, text: true},
	"usage":            {args: 3},
	"log":              {args: 1, text: true},
	"checkpoint":       {text: true},
	"yield":            {text: true},
	"fail":             {args: 1, text: true},
	"block":            {text: true},
	"verdict":          {args: 1, text: true},
	"done":             {text: true},
	"result":           {text: true},
	"crash":            {args: 1, optional: 1},
	"hang":             {},
	"ignore-sigterm":   {state: true},
	"deaf":             {state: true},
	"spawn-grandchild": {args: 1, optional: 1},
	"big-line":         {args: 1},
	"garbage":          {text: true},
	"stderr":           {args: 1},
	"raw":              {text: true},
	"env":              {args: 1},
	"resolve":          {},
	"flaky":            {args: 2, text: true},
	"rate-limited":     {args: 2, text: true},
}

// roleOf maps a mission kind to the role whose addressed lines it runs ("" for work).
func roleOf(kind string) string {
	switch kind {
	case "review", "repair", "verify":
		return kind
	}
	return ""
}

// scriptFor returns the directives of one attempt: the brief's own for work missions, the
// lines addressed to the role (see doc.go) for reviewers, repairers and verifiers, and the
// role's default when there are none.
func scriptFor(st agent.Start, text string) ([]directive, error) {
	role := roleOf(st.Kind)
	if role == "" {
		steps, err := parseScript(withoutAddressed(text))
		if err == nil && len(steps) == 0 {
			steps = defaultPlan(st)
		}
		return steps, err
	}
	var own []string
	for _, raw := range strings.Split(text, "\n") {
		line := strings.TrimLeft(strings.TrimSpace(strings.TrimSuffix(raw, "\r")), "> \t")
		if rest, ok := strings.CutPrefix(line, "@"+role+" "); ok {
			own = append(own, "@"+strings.TrimPrefix(strings.TrimSpace(rest), "@")) // "@repair @write" too
		}
	}
	steps, err := parseScript(strings.Join(own, "\n"))
	if err == nil && len(steps) == 0 {
		steps = roleDefault(role)
	}
	return steps, err
}

// withoutAddressed drops the lines addressed to a reviewer, repairer or verifier.
func withoutAddressed(text string) string {
	lines := strings.Split(text, "\n")
	out := lines[:0]
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "@review ") || strings.HasPrefix(t, "@repair ") || strings.HasPrefix(t, "@verify ") {
			continue
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}

// roleDefault is what a reviewer, verifier or repairer does when nobody scripted it.
func roleDefault(role string) []directive {
	switch role {
	case "review":
		return []directive{{name: "verdict", args: []string{"approved"}, text: "the reference agent read the change and has no findings"}}
	case "verify":
		return []directive{{name: "done", text: "the reference agent found the evidence it was asked for"}}
	}
	return []directive{{name: "resolve"}, {name: "commit", text: "Resolve conflicts with the target branch"},
		{name: "done", text: "resolved the conflicts, keeping both sides"}}
}

// parseScript returns the directives in text: every line whose first non-blank character is
// "@" followed by a letter. Other lines (the brief's prose) are ignored.
func parseScript(text string) ([]directive, error) {
	var out []directive
	for i, raw := range strings.Split(text, "\n") {
		line := strings.TrimSpace(strings.TrimSuffix(raw, "\r"))
		if len(line) < 2 || line[0] != '@' || !isLetter(line[1]) {
			continue
		}
		d, err := parseDirective(i+1, line[1:])
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func parseDirective(n int, s string) (directive, error) {
	name, rest, _ := strings.Cut(s, " ")
	d := directive{line: n, name: strings.ToLower(name)}
	ar, ok := directives[d.name]
	if !ok {
		return d, fmt.Errorf("script line %d: unknown directive @%s", n, name)
	}
	rest = strings.TrimSpace(rest)
	for range ar.args {
		if rest == "" {
			break
		}
		var arg string
		arg, rest, _ = strings.Cut(rest, " ")
		d.args = append(d.args, arg)
		rest = strings.TrimSpace(rest)
	}
	if len(d.args) < ar.args-ar.optional {
		return d, fmt.Errorf("script line %d: @%s needs %d argument(s)", n, d.name, ar.args-ar.optional)
	}
	if rest != "" && !ar.text {
		return d, fmt.Errorf("script line %d: @%s takes no text after its arguments (got %q)", n, d.name, rest)
	}
	if strings.HasPrefix(rest, `"`) {
		u, err := strconv.Unquote(rest)
		if err != nil {
			return d, fmt.Errorf("script line %d: @%s: text %s is not a valid Go string literal: %v", n, d.name, rest, err)
		}
		rest = u
	}
	d.text = rest
	return d, nil
}

// parseSize reads sizes such as 200KiB, 20MiB, 5MB or 1024 (bytes).
func parseSize(s string) (int, error) {
	units := []struct {
		suffix string
		mult   int
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"KB", 1000}, {"MB", 1000 * 1000}, {"B", 1}}
	mult := 1
	num := s
	for _, u := range units {
		if strings.HasSuffix(s, u.suffix) {
			num, mult = strings.TrimSuffix(s, u.suffix), u.mult
			break
		}
	}
	n, err := strconv.ParseFloat(num, 64)
	if err != nil || !(n >= 0) || n*float64(mult) > maxSize { // !(n >= 0): NaN too
		return 0, fmt.Errorf("size %q: write it like 200KiB, 20MiB or 1024 (at most 1GiB)", s)
	}
	return int(n * float64(mult)), nil
}

// maxSize bounds a SIZE: NaN, Inf or 1e99 converted to int were negative, which made
// strings.Repeat panic in @big-line and @stderr.
const maxSize = 1 << 30

// parseDuration reads a Go duration ("100ms", "2s").
func parseDuration(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("duration %q: write it like 100ms or 2s", s)
	}
	return d, nil
}

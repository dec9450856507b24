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
	at   place    // where it was written
	name string   // without the "@"
	args []string // fixed arguments
	text string   // the rest of the line (unquoted when it was a Go string literal)
}

// place is a line of a script source: the brief ("brief", numbered from the mission's own
// brief, see briefLines) or the --script file ("script").
type place struct {
	src string
	n   int
}

func (p place) String() string   { return fmt.Sprintf("%s line %d", p.src, p.n) }
func (p place) location() string { return fmt.Sprintf("%s:%d", p.src, p.n) }

// sourceLine is one line of a script source and where it is.
type sourceLine struct {
	at   place
	text string
}

// scriptError is a script that cannot run: a directive that is unknown, lacks an argument or
// has one that is wrong. It is found before any step runs.
type scriptError struct {
	at   place
	tool string // "@name" of a known directive, else "script"
	err  error
}

func (e *scriptError) Error() string { return e.at.String() + ": " + e.err.Error() }

// briefSection is the heading under which the scheduler's agent brief (prompts' agent_brief
// template) puts the mission's own brief, after one blank line.
const briefSection = "## What to do"

// briefLines numbers the brief's lines so that a location names the line the person wrote:
// when the brief is the scheduler's rendered agent brief, line 1 is the first line of the
// mission's own brief (under briefSection) and the template's lines before it are numbered
// as "agent-brief"; a brief without that heading is numbered from its first line.
func briefLines(text string) []sourceLine {
	lines := strings.Split(text, "\n")
	first := 0
	for i, l := range lines {
		if strings.TrimSpace(strings.TrimSuffix(l, "\r")) == briefSection {
			first = i + 1
			if first < len(lines) && strings.TrimSpace(lines[first]) == "" {
				first++
			}
			break
		}
	}
	out := make([]sourceLine, len(lines))
	for i, l := range lines {
		at := place{src: "brief", n: i - first + 1}
		if i < first {
			at = place{src: "agent-brief", n: i + 1}
		}
		out[i] = sourceLine{at: at, text: l}
	}
	return out
}

// scriptLines numbers the lines of the --script file from 1.
func scriptLines(text string) []sourceLine {
	if text == "" {
		return nil
	}
	var out []sourceLine
	for i, l := range strings.Split(text, "\n") {
		out = append(out, sourceLine{at: place{src: "script", n: i + 1}, text: l})
	}
	return out
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
	"symlink":          {args: 1, text: true},
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
// role's default when there are none. Every directive is checked before it returns: a
// *scriptError means nothing may run.
func scriptFor(st agent.Start, lines []sourceLine) ([]directive, error) {
	role := roleOf(st.Kind)
	if role == "" {
		steps, err := parseScript(withoutAddressed(lines))
		if err == nil && len(steps) == 0 {
			steps = defaultPlan(st)
		}
		return steps, err
	}
	var own []sourceLine
	for _, l := range lines {
		line := strings.TrimLeft(strings.TrimSpace(strings.TrimSuffix(l.text, "\r")), "> \t")
		if rest, ok := strings.CutPrefix(line, "@"+role+" "); ok {
			own = append(own, sourceLine{at: l.at, text: "@" + strings.TrimPrefix(strings.TrimSpace(rest), "@")}) // "@repair @write" too
		}
	}
	steps, err := parseScript(own)
	if err == nil && len(steps) == 0 {
		steps = roleDefault(role)
	}
	return steps, err
}

// withoutAddressed drops the lines addressed to a reviewer, repairer or verifier.
func withoutAddressed(lines []sourceLine) []sourceLine {
	var out []sourceLine
	for _, l := range lines {
		t := strings.TrimSpace(l.text)
		if strings.HasPrefix(t, "@review ") || strings.HasPrefix(t, "@repair ") || strings.HasPrefix(t, "@verify ") {
			continue
		}
		out = append(out, l)
	}
	return out
}

// roleDefault is what a reviewer, verifier or repairer does when nobody scripted it.
func roleDefault(role string) []directive {
	switch role {
	case "review":
		return []directive{{name: "verdict", args: []string{"approved"}, text: "the reference agent read the change and has no findings"}}
	case "verify":
		return []directive{{name: "done", text: "the reference agent found the evidence it was asked for"}}
	}
	// @done without text says what @resolve found: the files it resolved, or that there were none
	return []directive{{name: "resolve"}, {name: "commit", text: "Resolve conflicts with the target branch"}, {name: "done"}}
}

// parseScript returns the directives among lines: every line whose first non-blank character
// is "@" followed by a letter. Other lines (the brief's prose) are ignored. Each directive is
// parsed and checked (checkDirective) before any is returned.
func parseScript(lines []sourceLine) ([]directive, error) {
	var out []directive
	for _, l := range lines {
		line := strings.TrimSpace(strings.TrimSuffix(l.text, "\r"))
		if len(line) < 2 || line[0] != '@' || !isLetter(line[1]) {
			continue
		}
		d, err := parseDirective(l.at, line[1:])
		if err != nil {
			return nil, err
		}
		if err := checkDirective(d); err != nil {
			return nil, &scriptError{at: d.at, tool: "@" + d.name, err: fmt.Errorf("@%s: %w", d.name, err)}
		}
		out = append(out, d)
	}
	return out, nil
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func parseDirective(at place, s string) (directive, error) {
	name, rest, _ := strings.Cut(s, " ")
	d := directive{at: at, name: strings.ToLower(name)}
	fail := func(tool, format string, args ...any) (directive, error) {
		return d, &scriptError{at: at, tool: tool, err: fmt.Errorf(format, args...)}
	}
	ar, ok := directives[d.name]
	if !ok {
		return fail("script", "unknown directive @%s", name)
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
		return fail("@"+d.name, "@%s needs %d argument(s)", d.name, ar.args-ar.optional)
	}
	if rest != "" && !ar.text {
		return fail("@"+d.name, "@%s takes no text after its arguments (got %q)", d.name, rest)
	}
	if strings.HasPrefix(rest, `"`) {
		u, err := strconv.Unquote(rest)
		if err != nil {
			return fail("@"+d.name, "@%s: text %s is not a valid Go string literal: %v", d.name, rest, err)
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

package refagent

import (
	"regexp"
	"strings"
	"testing"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
)

// FuzzScript parses arbitrary briefs with the production scriptFor, as a work mission and as
// a reviewer's, repairer's and verifier's (lines addressed to the role). Properties: no
// panic; an error says "script line N" with N a line of the text; every directive parsed is a
// known one with the number of arguments its arity allows and text only where it takes text;
// a SIZE argument (@big-line, @stderr) that parses is within 0..1GiB, and a DURATION (@sleep,
// @heartbeat, @rate-limited's RESET) that parses is not negative.
//
//	go test -run '^$' -fuzz '^FuzzScript$' -fuzztime 10m ./agent/refagent/
func FuzzScript(f *testing.F) {
	for _, brief := range []string{
		"Add a health endpoint.\n\n@write health.go package health\n@commit add the endpoint\n@done added GET /healthz",
		"@progress 50 half way\n@log warn careful\n@checkpoint first half\n@sleep 100ms\n@heartbeat 1s\n@done",
		"@usage 1200 340 0.0123\n@fail test \"2 tests fail\\n\"\n",
		"@flaky 2 model overloaded\n@rate-limited 1 5m five_hour window\n@big-line 5MiB\n@stderr 200KiB\n",
		"Review this.\n> @review verdict minor rename it\n@repair @resolve\n@verify done found it\n",
		"@raw \"{\\\"type\\\":\\\"task.log\\\"}\\r\\n\"\n@garbage\n@env HOME\n@crash 3\n@spawn-grandchild 2\n@hang",
	} {
		for kind := range uint8(4) {
			f.Add(brief, kind)
		}
	}
	kinds := []string{"", "review", "repair", "verify"}
	f.Fuzz(func(t *testing.T, text string, kind uint8) {
		st := agent.Start{MissionID: "msn_01FUZZ", Title: "fuzz", Brief: text, Kind: kinds[int(kind)%len(kinds)]}
		lines := briefLines(text)
		steps, err := scriptFor(st, lines)
		if err != nil {
			checkScriptError(t, err, lines)
			return
		}
		for _, d := range steps {
			checkParsedDirective(t, d, lines)
		}
	})
}

var scriptLine = regexp.MustCompile(`^(?:agent-brief|brief) line (-?\d+): `)

func checkScriptError(t *testing.T, err error, lines []sourceLine) {
	t.Helper()
	m := scriptLine.FindStringSubmatch(err.Error())
	if m == nil {
		t.Fatalf("the error %q does not say which line", err)
	}
	if !namesALine(err.Error(), lines) {
		t.Fatalf("the error %q names no line of the %d-line brief", err, len(lines))
	}
}

// namesALine reports whether msg starts with the place of one of the brief's lines.
func namesALine(msg string, lines []sourceLine) bool {
	for _, l := range lines {
		if strings.HasPrefix(msg, l.at.String()+": ") {
			return true
		}
	}
	return false
}

func checkParsedDirective(t *testing.T, d directive, lines []sourceLine) {
	t.Helper()
	ar, ok := directives[d.name]
	if !ok {
		t.Fatalf("unknown directive %q parsed", d.name)
	}
	if len(d.args) > ar.args || len(d.args) < ar.args-ar.optional || (d.text != "" && !ar.text) {
		t.Fatalf("@%s parsed with %d args %q and text %q; its arity is %+v", d.name, len(d.args), d.args, d.text, ar)
	}
	if d.at != (place{}) && !namesALine(d.at.String()+": ", lines) { // a default step has no place
		t.Fatalf("@%s at %s, not a line of the %d-line brief", d.name, d.at, len(lines))
	}
	if err := checkDirective(d); err != nil {
		t.Fatalf("@%s was returned although its check fails: %v", d.name, err)
	}
	switch d.name {
	case "big-line", "stderr":
		if n, err := parseSize(d.args[0]); err == nil && (n < 0 || n > maxSize) {
			t.Fatalf("@%s %s: size %d", d.name, d.args[0], n)
		}
	case "sleep", "heartbeat":
		if v, err := parseDuration(d.args[0]); err == nil && v < 0 {
			t.Fatalf("@%s %s: duration %v", d.name, d.args[0], v)
		}
	}
}

package main

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// The engine's errors and hints are written for MCP clients: they name an argument by its
// JSON name (priority, depends_on[0], mission_id) and point at tools (list_missions,
// retry_mission). On the command line the same mistake is told in the command line's words:
// the flag or argument that carried the value, and the command that does what the tool does.
// This file is the one place that translates (cliError, called once by run); no command
// rewrites an engine message itself.

// toolCommands maps every MCP tool to the command line that does the same, or to "" when the
// command line has none (the message then keeps the tool's name: it is done from an MCP
// client). cliwords_test.go checks that every registered tool has an entry.
var toolCommands = map[string]string{
	"create_mission": "mcp-scheduler go", "list_missions": "mcp-scheduler missions list",
	"get_mission": "mcp-scheduler missions show", "cancel_mission": "mcp-scheduler missions cancel",
	"retry_mission": "mcp-scheduler missions retry", "voyage_status": "mcp-scheduler voyages show",
	"cancel_voyage": "mcp-scheduler voyages cancel", "list_escalations": "mcp-scheduler escalations list",
	"resolve_escalation": "mcp-scheduler escalations resolve", "get_events": "mcp-scheduler events",
	"update_mission": "mcp-scheduler missions update", "update_voyage": "mcp-scheduler voyages update",
	"status": "mcp-scheduler status", "resume_scheduler": "mcp-scheduler resume", "pause_scheduler": "mcp-scheduler pause",
	// Only from an MCP client (or, for the agent's own calls, from the agent).
	"escalate": "", "block_mission": "", "get_mission_log": "", "get_mission_diff": "",
	"approve_landing": "", "claim_mission": "", "heartbeat": "",
	"report_progress": "", "checkpoint_mission": "", "yield_mission": "", "complete_mission": "",
	"fail_mission": "", "list_agents": "", "dispatch": "",
}

// flagFields maps, per command (its path), the engine's field names to the flag or argument
// that carries that value on this command. A command missing here reaches no engine
// operation with a value of its own. cliwords_test.go checks that every flag of these
// commands is either here or in cliOnlyFlags, and that every field is one the command's tool
// takes.
var flagFields = map[string]map[string]string{
	"mcp-scheduler go": {"title": "TITLE", "brief": "--brief", "priority": "--priority",
		"voyage_id": "--voyage", "depends_on": "--depends-on", "repository": "--repo", "write_area": "--write-area",
		"cost_limit_usd": "--cost-limit-usd", "token_limit": "--token-limit"},
	"mcp-scheduler missions list":   missionsListFields,
	"mcp-scheduler missions":        missionsListFields, // missions alone lists
	"mcp-scheduler missions show":   {"mission_id": "MISSION_ID"},
	"mcp-scheduler missions cancel": {"mission_id": "MISSION_ID", "reason": "--reason", "skip": "--skip"},
	"mcp-scheduler missions retry":  {"mission_id": "MISSION_ID"},
	"mcp-scheduler missions update": {"mission_id": "MISSION_ID", "title": "--title", "brief": "--brief",
		"priority": "--priority", "retry_budget": "--retry-budget", "deadline": "--deadline",
		"cost_limit_usd": "--cost-limit-usd", "token_limit": "--token-limit"},
	"mcp-scheduler escalations list":    escalationsListFields,
	"mcp-scheduler escalations":         escalationsListFields, // escalations alone lists
	"mcp-scheduler escalations resolve": {"escalation_id": "ESCALATION_ID", "action": "--action", "note": "--note"},
	// escalations show has no tool (MCP clients read escalations with list_escalations): its
	// argument is checked by the command itself, and named by it here.
	"mcp-scheduler escalations show": {"escalation_id": "ESCALATION_ID"},
	"mcp-scheduler voyages show":     {"voyage_id": "VOYAGE_ID"},
	// voyages list has no tool: it checks its --state and --limit itself.
	"mcp-scheduler voyages cancel": {"voyage_id": "VOYAGE_ID", "reason": "--reason"},
	"mcp-scheduler voyages update": {"voyage_id": "VOYAGE_ID", "cost_limit_usd": "--cost-limit-usd", "token_limit": "--token-limit"},
	"mcp-scheduler events": {"after_seq": "--after", "mission_id": "--mission", "voyage_id": "--voyage",
		"types": "--type", "limit": "--limit"},
}

var (
	missionsListFields    = map[string]string{"states": "--state", "voyage_id": "--voyage", "limit": "--limit", "cursor": "--cursor"}
	escalationsListFields = map[string]string{"mission_id": "--mission", "voyage_id": "--voyage", "limit": "--limit"}
)

// cliOnlyFlags are the flags of the commands in flagFields that no engine field carries (the
// command line decides them itself).
var cliOnlyFlags = map[string][]string{
	"mcp-scheduler escalations list": {"all"},
	"mcp-scheduler escalations":      {"all"},
	"mcp-scheduler events":           {"follow"},
}

// commandTools names the tool whose arguments a command's fields are (for the test that
// every field of flagFields is a real argument name).
var commandTools = map[string]string{
	"mcp-scheduler go": "create_mission", "mcp-scheduler missions list": "list_missions",
	"mcp-scheduler missions": "list_missions", "mcp-scheduler missions show": "get_mission",
	"mcp-scheduler missions cancel": "cancel_mission", "mcp-scheduler missions retry": "retry_mission",
	"mcp-scheduler escalations list": "list_escalations", "mcp-scheduler escalations": "list_escalations",
	"mcp-scheduler escalations resolve": "resolve_escalation", "mcp-scheduler voyages show": "voyage_status",
	"mcp-scheduler voyages cancel": "cancel_voyage", "mcp-scheduler events": "get_events",
	"mcp-scheduler missions update": "update_mission", "mcp-scheduler voyages update": "update_voyage",
}

// toolWord finds tool names as whole words.
var toolWord = regexp.MustCompile(`\b[a-z]+(?:_[a-z]+)+\b`)

// fieldPrefix finds a field name (with an optional index, and nested parts) at the start of
// a message part: "depends_on[0]: …", "voyage_id: …".
var fieldPrefix = regexp.MustCompile(`^([a-z_]+)(\[(\d+)\])?((?:\.[a-z_]+)*): `)

// cliError tells err in the command line's words for the command that ran (nil cmd: the
// root). A field error about a flag's value is a usage mistake (exit 2), like every other
// bad flag value, whichever check found it; so is anything the command refused before it
// opened the data dir (precheck.go). A field error about an argument found later (an
// escalation already resolved) is not: the argument was well formed.
func cliError(cmd *cobra.Command, err error) error {
	if err == nil {
		return nil
	}
	path := "mcp-scheduler"
	if cmd != nil {
		path = cmd.CommandPath()
	}
	msg, flag := translate(path, err.Error())
	var fe *domain.FieldError
	var out error = cliMessage{msg: msg, err: err}
	if msg == err.Error() {
		out = err
	}
	if isUsage(err) || (strings.HasPrefix(flag, "--") && errors.As(err, &fe)) {
		return usageError{out}
	}
	return out
}

// translate rewrites a message: a leading field name this command carries becomes its flag
// or argument (returned, "" when none), and tool names become their commands.
func translate(path, msg string) (string, string) {
	var flag string
	if m := fieldPrefix.FindStringSubmatch(msg); m != nil {
		if f, ok := flagFields[path][m[1]]; ok && m[4] == "" {
			flag = f
			msg = flagText(f, m[3]) + ": " + msg[len(m[0]):]
		}
	}
	return commandWords(msg), flag
}

// commandWords replaces the tool names in msg by their commands, except inside a quoted
// value (`"list_missions" is not a mission id` quotes what the user typed, which stays as typed).
// A tool name followed (past an optional "with") by one of its fields that the command takes
// as a flag becomes a whole command line: "update_mission cost_limit_usd" is
// "mcp-scheduler missions update MISSION_ID --cost-limit-usd", "resolve_escalation with
// action retry" is "mcp-scheduler escalations resolve ESCALATION_ID --action retry". A tool
// followed by a field its command has no flag for keeps its name (it is done from an MCP
// client). ids fill the placeholders: an id with the mission prefix replaces MISSION_ID, and
// so on.
func commandWords(msg string, ids ...string) string {
	msg = cliPhrases.Replace(msg)
	var b strings.Builder
	last := 0
	for _, loc := range toolWord.FindAllStringIndex(msg, -1) {
		if loc[0] < last {
			continue // inside the field just consumed
		}
		c := toolCommands[msg[loc[0]:loc[1]]]
		if c == "" || strings.Count(msg[:loc[0]], `"`)%2 == 1 {
			continue
		}
		line, n, ok := commandLine(c, msg[loc[1]:], ids)
		if !ok {
			continue
		}
		b.WriteString(msg[last:loc[0]])
		b.WriteString(line)
		last = loc[1] + n
	}
	b.WriteString(msg[last:])
	return b.String()
}

// cliPhrases are the engine's phrases that point at what only an MCP client sees (no tool
// name alone), told as what the command line shows instead.
var cliPhrases = strings.NewReplacer(domain.VoyageIDSource, "mcp-scheduler voyages list, or the voyage line of mcp-scheduler missions show")

// toolField finds the word after a tool name: " cost_limit_usd", " with action".
var toolField = regexp.MustCompile(`^ (?:with )?([a-z]+(?:_[a-z]+)*)\b`)

// commandLine is what replaces a tool whose command is c, given the text after the tool's
// name: the command (consuming nothing), or the command with its argument and the flag of
// the field that follows (consuming the field); ok is false when the field that follows is
// one the command has no flag for.
func commandLine(c, after string, ids []string) (line string, consumed int, ok bool) {
	m := toolField.FindStringSubmatch(after)
	if m == nil {
		return withArg(c, after, ids), 0, true
	}
	flag := flagFields[c][m[1]]
	if !strings.HasPrefix(flag, "--") {
		_, isTool := toolCommands[m[1]]
		return withArg(c, after, ids), 0, isTool || !strings.Contains(m[1], "_") // a plain word, not a field
	}
	parts := []string{c}
	if arg := commandArg(c); arg != "" {
		parts = append(parts, placeholderValue(arg, ids))
	}
	return strings.Join(append(parts, flag), " "), len(m[0]), true
}

// withArg is command c with its argument when one of ids is of its kind ("mcp-scheduler
// missions update msn_…"), so that the line runs as printed; c alone when c takes no argument,
// when no id of its kind is known, or when the text after it already gives one.
func withArg(c, after string, ids []string) string {
	arg := commandArg(c)
	if arg == "" {
		return c
	}
	if next, _, _ := strings.Cut(strings.TrimPrefix(after, " "), " "); next == arg || isAnyID(strings.TrimRight(next, ").,;:")) {
		return c
	}
	if v := placeholderValue(arg, ids); v != arg {
		return c + " " + v
	}
	return c
}

// isAnyID reports whether s is an id of a kind a placeholder names.
func isAnyID(s string) bool {
	for _, p := range placeholders {
		if domain.ValidID(p, s) {
			return true
		}
	}
	return false
}

// commandArg is the argument placeholder a command takes (MISSION_ID), "" when none.
func commandArg(c string) string {
	for field, f := range flagFields[c] {
		if strings.HasSuffix(field, "_id") && !strings.HasPrefix(f, "--") {
			return f
		}
	}
	return ""
}

// placeholders are the argument placeholders an id fills, by the id's prefix.
var placeholders = map[string]string{"MISSION_ID": domain.PrefixMission, "VOYAGE_ID": domain.PrefixVoyage,
	"ESCALATION_ID": domain.PrefixEscalation}

// placeholderValue is the first of ids that is an id of the placeholder's kind, else the
// placeholder itself.
func placeholderValue(arg string, ids []string) string {
	for _, id := range ids {
		if p, ok := placeholders[arg]; ok && domain.ValidID(p, id) {
			return id
		}
	}
	return arg
}

// cliText is a sentence of the engine (a reason a mission waits, a decision an escalation
// asks for, a next step) told in the command line's words for printing: commandWords, with
// ids (the mission, voyage, escalation being shown) filling the commands' arguments. The
// engine's sentence stays the one source; MCP clients read it as it is. The sentence may
// quote an agent's or a person's words, so it is shown as people are shown text
// (domain.Shown).
func cliText(s string, ids ...string) string { return domain.Shown(commandWords(s, ids...)) }

// flagText names a flag, with which of its repeated values when the field was a list item
// ("--depends-on (the 2nd)").
func flagText(flag, index string) string {
	if index == "" {
		return flag
	}
	var i int
	if _, err := fmt.Sscan(index, &i); err != nil {
		return flag
	}
	return fmt.Sprintf("%s (value %d)", flag, i+1)
}

// cliMessage is an error told in the command line's words; errors.Is and errors.As still see
// the original.
type cliMessage struct {
	msg string
	err error
}

func (c cliMessage) Error() string { return c.msg }
func (c cliMessage) Unwrap() error { return c.err }

package adapters

import (
	"fmt"
	"strings"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
)

// claudeDenial is one tool call Claude Code refused under the profile's permission settings:
// Tool is the tool's name (Bash, Write, mcp__server__tool), What the call as people read it
// ("Bash: git push origin main"), Message Claude Code's reason ("This command requires
// approval").
type claudeDenial struct {
	Tool    string
	What    string
	Message string
}

// claudeDenials collects the denials of one run from the two places Claude Code reports them
// (agent-clis.md §2, §3): a system/permission_denied event as it happens, and the result's
// permission_denials list at the end. A denial is counted once per tool_use id.
type claudeDenials struct {
	mode  string            // the permission mode system/init reported
	calls map[string]string // tool_use id → the call as people read it, until its result
	ids   map[string]bool
	list  []claudeDenial
}

func newClaudeDenials() *claudeDenials {
	return &claudeDenials{calls: map[string]string{}, ids: map[string]bool{}}
}

// maxDenialsNamed bounds how many denied calls a failure summary names one by one, and
// namedCallRunes how much of each it quotes (the diagnostic keeps them whole): the summary
// ends with the profile setting that would allow them, and it must stay short enough to reach
// the escalation's reason and a notification's summary whole.
const (
	maxDenialsNamed = 5
	namedCallRunes  = 100
)

// called remembers a tool_use so that a later denial can name its input.
func (d *claudeDenials) called(b claudeBlock) {
	if b.ID != "" {
		d.calls[b.ID] = claudeTool(b.Name, b.Input)
	}
}

// answered forgets a tool_use whose result arrived (the map stays as small as the calls in
// flight).
func (d *claudeDenials) answered(id string) { delete(d.calls, id) }

// add records one denial; id may be empty (then it is not deduplicated).
func (d *claudeDenials) add(id, tool string, in claudeToolInput, message string) {
	if id != "" {
		if d.ids[id] {
			return
		}
		d.ids[id] = true
	}
	what := d.calls[id]
	if what == "" || (what == tool && in != (claudeToolInput{})) {
		what = claudeTool(tool, in)
	}
	if cmd, ok := strings.CutPrefix(what, "Bash: "); ok && tool == "Bash" && onlyRecordsWork(cmd) {
		return // the scheduler commits what the agent could not
	}
	if tool == "" {
		tool = "an unnamed tool"
		what = tool
	}
	d.list = append(d.list, claudeDenial{Tool: tool, What: what, Message: strings.TrimSpace(message)})
}

// failure is the permission failure for the denials seen, or nil when there were none. It
// names the refused calls and the profile settings that would allow them: allowed_tools
// (Claude Code's --allowedTools; for an MCP tool, mcp__<server> allows the whole server) or
// permission_mode (--permission-mode).
func (d *claudeDenials) failure() *agent.Failure {
	if len(d.list) == 0 {
		return nil
	}
	var whats, tools, diag []string
	seenTool := map[string]bool{}
	for i, x := range d.list {
		if i < maxDenialsNamed {
			whats = append(whats, clipRunes(x.What, namedCallRunes))
		}
		if !seenTool[x.Tool] {
			seenTool[x.Tool] = true
			tools = append(tools, allowHint(x.Tool))
		}
		if x.Message != "" {
			diag = append(diag, x.What+": "+x.Message)
		}
	}
	if n := len(d.list) - maxDenialsNamed; n > 0 {
		whats = append(whats, fmt.Sprintf("and %d more", n))
	}
	mode := d.mode
	if mode == "" {
		mode = "unknown"
	}
	summary := fmt.Sprintf("claude-code was refused %d tool call(s) under permission mode %s: %s; "+
		"to allow them, add %s to the profile's allowed_tools (Claude Code --allowedTools) or choose a permission_mode that permits them",
		len(d.list), mode, strings.Join(whats, ", "), strings.Join(tools, ", "))
	return &agent.Failure{Kind: agent.KindPermission, Tool: d.list[0].Tool,
		Diagnostic: capBytes(strings.Join(diag, "\n"), diagnosticBytes), Summary: capBytes(summary, logBytes)}
}

// deniedResult turns a result into a permission failure when calls were denied: a run that
// was refused a tool did not do what it was asked, whatever its final text says, and
// retrying under the same settings cannot help (design brief §2: an environment failure
// blocks with an escalation). A cancelled run, and failures that say more (auth, quota, the
// model API, a timeout), keep their kind. The agent's own text stays in the summary's place for people: it is appended to the
// diagnostic.
func (d *claudeDenials) deniedResult(r agent.WorkerResult, text string) agent.WorkerResult {
	f := d.failure()
	if f == nil {
		return r
	}
	if r.Status == agent.StatusCancelled || (r.Failure != nil && r.Failure.Kind != agent.KindError && r.Failure.Kind != agent.KindCrash) {
		return r // the scheduler took the work away, or the failure says more (auth, quota, model, timeout)
	}
	if t := strings.TrimSpace(text); t != "" {
		f.Diagnostic = capBytes(strings.TrimSpace(f.Diagnostic+"\nclaude-code's last message: "+t), diagnosticBytes)
	}
	r.Status, r.Failure, r.Summary, r.Artifacts = agent.StatusFailed, f, f.Summary, nil
	return r
}

// allowHint names the allowed_tools entry that allows tool: the tool itself, and for an MCP
// tool (mcp__<server>__<tool>) also its server's entry, which allows every tool of it.
func allowHint(tool string) string {
	if rest, ok := strings.CutPrefix(tool, "mcp__"); ok {
		if server, _, ok := strings.Cut(rest, "__"); ok && server != "" {
			return fmt.Sprintf("%q (or %q for every tool of that MCP server)", tool, "mcp__"+server)
		}
	}
	return fmt.Sprintf("%q", tool)
}

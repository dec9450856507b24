package adapters

import (
	"fmt"
	"strings"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
)

// codexSandboxWords are the messages a command gets when Codex's sandbox (bubblewrap,
// seccomp, Landlock on Linux; Seatbelt on macOS) refuses it, matched in its lower-cased
// output: writes outside the writable roots read "Read-only file system" (agent-clis.md §4).
var codexSandboxWords = []string{"read-only file system", "sandbox denied", "blocked by sandbox", "denied by the sandbox"}

// codexDenials collects the commands Codex's sandbox or approval policy refused in one run.
//
// Codex 0.171 does not always print a command its sandbox refuses: in our runs about one in
// four showed the command_execution items (failed, exit 1, "Read-only file system" in the
// output), the others none, and then only the model sees the refusal (agent-clis.md §4;
// agent/adapters/realcli_permission_test.go). A refusal not printed cannot be seen here.
// Recognised: a failed command_execution whose output is the sandbox's refusal (seen from
// the real CLI), and one whose status is "declined" (Codex's exec events declare it; tested
// on hand-written events).
type codexDenials struct {
	list []string // the refused commands, in order
	diag []string
}

// saw looks at a completed command_execution item and records it when it was refused.
func (d *codexDenials) saw(it *codexItem) {
	out := strings.ToLower(it.AggregatedOutput)
	refused := it.Status == "declined" ||
		((it.Status == "failed" || (it.ExitCode != nil && *it.ExitCode != 0)) && containsAny(out, codexSandboxWords))
	if !refused {
		return
	}
	cmd := strings.TrimSpace(it.Command)
	if onlyRecordsWork(cmd) || strings.Contains(out, "/.git/") {
		return // .git is read-only in workspace-write: the scheduler commits instead
	}
	if cmd == "" {
		cmd = "a command"
	}
	d.list = append(d.list, cmd)
	line, _ := oneLine(it.AggregatedOutput, progressRunes)
	if line == "" {
		line = it.Status
	}
	d.diag = append(d.diag, "$ "+cmd+": "+line)
}

// deniedResult turns a completed turn into a permission failure when commands were refused:
// the work they were to do was not done, and retrying in the same sandbox cannot help. It
// names the commands and the profile key that would allow them: sandbox (Codex sandbox_mode).
func (d *codexDenials) deniedResult(r agent.WorkerResult) agent.WorkerResult {
	if len(d.list) == 0 || (r.Failure != nil && r.Failure.Kind != agent.KindError) || r.Status == agent.StatusCancelled {
		return r
	}
	var named []string
	for _, cmd := range d.list[:min(len(d.list), maxDenialsNamed)] {
		named = append(named, clipRunes(cmd, namedCallRunes))
	}
	more := ""
	if len(d.list) > maxDenialsNamed {
		more = fmt.Sprintf(", and %d more", len(d.list)-maxDenialsNamed)
	}
	summary := fmt.Sprintf("codex's sandbox refused %d command(s): %s%s; to allow them, set the profile's sandbox "+
		"(Codex sandbox_mode) to one that permits them (workspace-write lets commands write the workspace, "+
		"danger-full-access everything, including the worktree's .git)", len(d.list), strings.Join(named, "; "), more)
	diag := strings.Join(d.diag, "\n")
	if r.Summary != "" {
		diag += "\ncodex's last message: " + r.Summary
	}
	f := &agent.Failure{Kind: agent.KindPermission, Tool: d.list[0], Diagnostic: capBytes(diag, diagnosticBytes),
		Summary: capBytes(summary, logBytes)}
	r.Status, r.Failure, r.Summary, r.Artifacts = agent.StatusFailed, f, f.Summary, nil
	return r
}

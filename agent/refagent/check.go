package refagent

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
)

// checkDirective checks a parsed directive's arguments, so that a broken script fails before
// any step runs (doc.go). The steps read their arguments with the same functions.
func checkDirective(d directive) error {
	var err error
	switch d.name {
	case "write", "append":
		err = localPath(d.args[0])
	case "symlink":
		if err = localPath(d.args[0]); err == nil && d.text == "" {
			err = fmt.Errorf("@symlink %s needs a TARGET", d.args[0])
		}
	case "sleep", "heartbeat":
		_, err = parseDuration(d.args[0])
	case "progress":
		_, err = parsePercent(d.args[0])
	case "log":
		err = checkLevel(d.args[0])
	case "usage":
		_, err = parseUsage(d.args)
	case "verdict":
		err = checkVerdict(d.args[0])
	case "crash":
		_, err = exitCode(d.args)
	case "spawn-grandchild":
		_, err = grandchildCount(d.args)
	case "big-line", "stderr":
		_, err = parseSize(d.args[0])
	case "flaky":
		_, err = attemptCount(d.args[0])
	case "rate-limited":
		if _, err = attemptCount(d.args[0]); err == nil {
			_, err = parseDuration(d.args[1])
		}
	}
	return err
}

// localPath refuses a path that is absolute or leaves the workspace.
func localPath(rel string) error {
	if !filepath.IsLocal(rel) {
		return fmt.Errorf("path %q must be relative and stay inside the workspace", rel)
	}
	return nil
}

func parsePercent(s string) (float64, error) {
	pct, err := strconv.ParseFloat(s, 64)
	if err != nil || pct < 0 || pct > 100 {
		return 0, fmt.Errorf("percent %q must be a number in 0..100", s)
	}
	return pct, nil
}

var logLevels = []string{"debug", "info", "warn", "error"}

func checkLevel(s string) error {
	if !slices.Contains(logLevels, s) {
		return fmt.Errorf("level %q must be one of %v", s, logLevels)
	}
	return nil
}

var verdicts = []string{agent.VerdictApproved, agent.VerdictMinor, agent.VerdictSevere, agent.VerdictInsufficient}

func checkVerdict(s string) error {
	if !slices.Contains(verdicts, s) {
		return fmt.Errorf("verdict %q must be one of %v", s, verdicts)
	}
	return nil
}

// parseUsage reads @usage's INPUT_TOKENS OUTPUT_TOKENS COST_USD.
func parseUsage(args []string) (agent.Usage, error) {
	in, errIn := strconv.ParseInt(args[0], 10, 64)
	out, errOut := strconv.ParseInt(args[1], 10, 64)
	cost, errCost := strconv.ParseFloat(args[2], 64)
	if errIn != nil || errOut != nil || errCost != nil {
		return agent.Usage{}, fmt.Errorf("%s %s %s: want INPUT_TOKENS OUTPUT_TOKENS COST_USD (two whole numbers and a number of dollars)", args[0], args[1], args[2])
	}
	u := agent.Usage{InputTokens: in, OutputTokens: out, CostUSD: cost}
	return u, u.Check()
}

// exitCode reads @crash's optional CODE (default 1).
func exitCode(args []string) (int, error) {
	if len(args) == 0 {
		return 1, nil
	}
	c, err := strconv.Atoi(args[0])
	if err != nil || c < 1 || c > 255 {
		return 0, fmt.Errorf("exit code %q must be in 1..255", args[0])
	}
	return c, nil
}

// grandchildCount reads @spawn-grandchild's optional N (default 1).
func grandchildCount(args []string) (int, error) {
	if len(args) == 0 {
		return 1, nil
	}
	n, err := strconv.Atoi(args[0])
	if err != nil || n < 1 || n > 16 {
		return 0, fmt.Errorf("grandchild count %q must be in 1..16", args[0])
	}
	return n, nil
}

// attemptCount reads the N of @flaky and @rate-limited: a positive attempt number.
func attemptCount(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("attempt count %q must be a positive whole number", s)
	}
	return n, nil
}

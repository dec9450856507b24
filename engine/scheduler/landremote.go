package scheduler

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/worktree"
)

// pushRetry is how long a landing whose push the remote refused waits before it is tried
// again: a refusal (a hook, permissions, a protected branch) needs a person, and every try
// merges and runs the checks again.
const pushRetry = time.Minute

// pushRefused handles a landing onto a remote repository whose push the remote refused for
// another reason than a moved target (worktree.ErrPushRefused): nothing moved and nothing is
// recorded, so the landing stays queued; the person gets an escalation (raised once) with git's
// message as evidence, and this process tries the landing again after pushRetry.
func (lr *lander) pushRefused(ctx context.Context, m *domain.Mission, target string, err error) {
	lr.mu.Lock()
	lr.pushRetryAt[m.ID] = lr.cfg.Now().Add(pushRetry)
	lr.mu.Unlock()
	evidence := []string{"repository: " + m.Repository, "target branch: " + target}
	var ge *worktree.GitError
	if errors.As(err, &ge) {
		for _, line := range strings.Split(strings.TrimSpace(ge.Stderr), "\n") {
			if line = strings.TrimSpace(line); line != "" {
				evidence = append(evidence, line)
			}
		}
	} else {
		evidence = append(evidence, err.Error())
	}
	lr.log.Warn("the remote refused the landing's push; the landing stays queued", "mission_id", m.ID,
		"repository", m.Repository, "target", target, "retry_in", pushRetry.String(), "err", err)
	lr.once(ctx, engine.EscalationSpec{MissionIDs: []string{m.ID}, VoyageID: m.VoyageID, Route: domain.RoutePerson,
		Kind: "remote", Reason: fmt.Sprintf("mission %s cannot land: the remote of %s refused the push to %s: %s", m.ID, m.Repository, target, firstLine(stderrOrError(err))),
		DecisionRequired: "make the remote accept the push (its hook, permissions or branch protection); the landing is retried by itself every minute",
		Evidence:         evidence, SafeNextStep: "get_mission_diff " + m.ID})
}

// pushRetryDue says whether a landing whose push was refused may be tried again now.
func (lr *lander) pushRetryDue(id string) bool {
	lr.mu.Lock()
	defer lr.mu.Unlock()
	at, ok := lr.pushRetryAt[id]
	if ok && lr.cfg.Now().Before(at) {
		return false
	}
	delete(lr.pushRetryAt, id)
	return true
}

// stderrOrError is git's message when err carries a *worktree.GitError, else err's text.
func stderrOrError(err error) string {
	var ge *worktree.GitError
	if errors.As(err, &ge) && strings.TrimSpace(ge.Stderr) != "" {
		return strings.TrimSpace(ge.Stderr)
	}
	return err.Error()
}

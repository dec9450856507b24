package main

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/worktree"
)

// remoteProbeTimeout bounds the doctor's look at each remote repository.
const remoteProbeTimeout = 20 * time.Second

// remoteChecks asks every configured remote repository for its HEAD (git ls-remote, in batch
// mode: nothing prompts) and reports it reachable with its default branch, or git's error with
// what to check.
func (a *app) remoteChecks(ctx context.Context) []check {
	var out []check
	for _, rm := range a.cfg.remotes() {
		name := "remote " + rm.Name
		shown := displayURL(rm.URL)
		head, err := worktree.ProbeRemote(ctx, "", rm.URL, remoteProbeTimeout)
		if err != nil {
			out = append(out, check{Name: name, Detail: fmt.Sprintf("%s cannot be reached: %v; check the URL (remote = in [[repositories]]), the network, and this machine's access to it (ssh key and known_hosts, or a git credential helper): git runs without prompting here",
				shown, err)})
			continue
		}
		out = append(out, check{Name: name, OK: true, Detail: shown + ": reachable, " + describeHead(head)})
	}
	return out
}

// describeHead says what a remote's HEAD is.
func describeHead(h worktree.RemoteHead) string {
	switch {
	case h.Commit == "":
		return "empty (no commits yet)"
	case h.DefaultBranch == "":
		return "HEAD at " + short(h.Commit) + " (the server does not name its default branch)"
	}
	return "default branch " + h.DefaultBranch + " at " + short(h.Commit)
}

func short(sha string) string { return sha[:min(len(sha), 12)] }

// displayURL is a remote URL with any password hidden.
func displayURL(raw string) string {
	if u, err := url.Parse(raw); err == nil && u.User != nil {
		if _, has := u.User.Password(); has {
			return u.Redacted()
		}
	}
	return raw
}

// landingLocksCheck lists the live landing locks (a node landing onto a target holds one,
// serializing the cluster's landings there): on a cluster always, elsewhere only when one is
// held.
func (a *app) landingLocksCheck(ctx context.Context) (check, bool) {
	locks, err := a.eng.LandingLocks(ctx)
	if err != nil {
		return check{Name: "landing locks", Detail: "cannot read them: " + err.Error()}, true
	}
	if len(locks) == 0 && a.cfg.Storage.URL == "" {
		return check{}, false
	}
	return check{Name: "landing locks", OK: true, Detail: landingLocksText(locks, a.eng.Now())}, true
}

// landingLocksText lists landing locks as "target held by node (expires in 41s)", or says
// none is held.
func landingLocksText(locks []engine.LandingLock, now time.Time) string {
	if len(locks) == 0 {
		return "none held: no node is landing"
	}
	parts := make([]string, len(locks))
	for i, l := range locks {
		parts[i] = landingLockText(l.Target, l.Node, l.ExpiresAt, now)
	}
	return strings.Join(parts, ", ")
}

// landingLockText is one landing lock as "target held by node (expires in 41s)".
func landingLockText(target, node string, expires, now time.Time) string {
	return fmt.Sprintf("%s held by %s (expires in %s)", target, node, expires.Sub(now).Round(time.Second))
}

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
)

// What serve and daemon say when they start, so that nothing waits in silence: a --repo that
// is not there, a server with no repository at all, and a process that does not lead the
// loop because another one does.

// checkRepoFlag refuses a --repo that is not a directory inside a git checkout, in plain
// words (a usage mistake: nothing is opened).
func checkRepoFlag(ctx context.Context, dir string) error {
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return usageError{fmt.Errorf("--repo %s: there is no such directory (give the path of a git checkout)", dir)}
	case err != nil:
		return usageError{fmt.Errorf("--repo %s: %w", dir, err)}
	case !st.IsDir():
		return usageError{fmt.Errorf("--repo %s: is a file, not a directory (give the path of a git checkout)", dir)}
	}
	if _, err := gitTopLevel(ctx, dir); err != nil {
		return usageError{fmt.Errorf("--repo %s: is not inside a git repository (run git init there, or give a checkout)", dir)}
	}
	return nil
}

// noRepositoryWarning is what serve and daemon say when missions could name no repository:
// the process was started outside any git checkout, with no --repo and no [[repositories]].
func (a *app) noRepositoryWarning() string {
	if a.repos == nil || a.repos.defaultRepo != "" || len(a.cfg.Repositories) > 0 {
		return ""
	}
	where := "the configuration file"
	if a.cfg.path != "" {
		where = a.cfg.path
	}
	return "no repository: started outside any git repository with no --repo and no [[repositories]] in " + where +
		", so no mission can be created (each needs a repository this server may use): start it inside a checkout, pass --repo DIR, or add [[repositories]] path = \"DIR\" there"
}

// warnNoRepository logs noRepositoryWarning, if any.
func (a *app) warnNoRepository() {
	if w := a.noRepositoryWarning(); w != "" {
		a.log.Warn(w)
	}
}

// leaderSeen is the holder of a live leader lease as a starting process sees it.
type leaderSeen struct {
	text   string        // leaderText: "pid 4242 on host build-1, leading since … (epoch 3)"
	pid    int           // from the owner; 0 when it has another form
	gone   bool          // its process is known dead: on this host, and no process has its pid
	left   time.Duration // until its lease ends
	locked bool          // it held the host's leader lock: a successor here takes over at once
}

// otherLeader describes the process that leads the loop on this data dir when it is not
// this one (false when none leads, or the lease ran out): its pid and host from the owner
// ("host:pid:random"), since when (the leader.elected event of its epoch), its epoch, and
// whether it is gone (a process of this host that no longer runs: SIGKILLed, its lease
// not yet run out).
func (a *app) otherLeader(ctx context.Context) (leaderSeen, bool, error) {
	st, err := a.eng.Status(ctx)
	if err != nil {
		return leaderSeen{}, false, err
	}
	l := st.Leader
	now := time.Now()
	if l.Owner == "" || !l.ExpiresAt.After(now) {
		return leaderSeen{}, false, nil
	}
	since, err := a.leaderSince(ctx, l)
	if err != nil {
		return leaderSeen{}, false, err
	}
	host, pid := ownerProcess(l.Owner)
	seen := leaderSeen{text: leaderText(l, since), pid: pid, left: l.ExpiresAt.Sub(now), locked: l.HostLocked}
	if self, err := os.Hostname(); err == nil && pid > 0 && host == self {
		seen.gone = !processAlive(pid)
	}
	return seen, true, nil
}

// ownerProcess reads the host and pid of a leader lease's owner ("host:pid:random"); pid 0
// when the owner has another form.
func ownerProcess(owner string) (string, int) {
	parts := strings.Split(owner, ":")
	if len(parts) < 3 {
		return "", 0
	}
	pid, err := strconv.Atoi(parts[len(parts)-2])
	if err != nil || pid <= 0 {
		return "", 0
	}
	return strings.Join(parts[:len(parts)-2], ":"), pid
}

// processAlive reports whether a process with this pid runs on this host (signal 0: a
// process of another user answers EPERM, and counts).
func processAlive(pid int) bool {
	return !errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

// leaderText is "pid 4242 on host build-1, leading since 2026-12-01 18:12:39 (epoch 3)".
func leaderText(l engine.Leader, since time.Time) string {
	s := ownerText(l.Owner) + ", leading"
	if !since.IsZero() {
		s += " since " + cellText(since)
	}
	return fmt.Sprintf("%s (epoch %d)", s, l.Epoch)
}

// ownerText names a leader lease's owner ("host:pid:random") as "pid 4242 on host build-1"
// ("process OWNER" when it has another form).
func ownerText(owner string) string {
	if parts := strings.Split(owner, ":"); len(parts) >= 3 {
		return "pid " + parts[len(parts)-2] + " on host " + strings.Join(parts[:len(parts)-2], ":")
	}
	return "process " + owner
}

// leaderSince finds when the leader's epoch began: the time of the leader.elected event of
// that epoch (zero when history retention removed it).
func (a *app) leaderSince(ctx context.Context, l engine.Leader) (time.Time, error) {
	var since time.Time
	f := engine.EventFilter{Types: []string{"leader.elected"}, Limit: 1000}
	for {
		evs, err := a.eng.Events(ctx, f)
		if err != nil {
			return time.Time{}, err
		}
		for _, ev := range evs {
			var d struct {
				Epoch int64 `json:"epoch"`
			}
			if json.Unmarshal(ev.Data, &d) == nil && d.Epoch == l.Epoch {
				since = ev.At
			}
		}
		if len(evs) < f.Limit {
			return since, nil
		}
		f.AfterSeq = evs[len(evs)-1].Seq
	}
}

// sayWhoLeads logs, at start, that another process leads the loop (so this one stands by
// and takes over when it stops), naming it; or, when that process is gone (it ran on this
// host and no longer does), that this one takes over: at once when the gone one held the
// host lock (engine.Leadership proves it dead by taking the lock), else when its lease ends.
func (a *app) sayWhoLeads(ctx context.Context, what string) {
	seen, leads, err := a.otherLeader(ctx)
	if err != nil {
		a.log.Warn("could not read who leads the scheduler loop", "err", err)
		return
	}
	other := seen.text
	switch {
	case !leads:
	case seen.gone:
		when := "at once (the host lock it held was released when it died)"
		if !seen.locked {
			when = "when its lease ends, in " + max(seen.left.Round(time.Second), time.Second).String()
		}
		a.log.Info(fmt.Sprintf("the previous leader of the scheduler loop on this data dir is gone: %s, but no process has pid %d on this host now; this %s takes over %s",
			other, seen.pid, what, when))
	case a.cfg.Storage.URL != "":
		// A cluster: the leader lease is the cluster's, not this data dir's, and this process
		// still runs its own node (or waits for it: "node is run by another live process").
		a.log.Info("another node leads the cluster-wide duties (reaping, deadlines, voyage settlement): " + other +
			"; this " + what + " is a node of the same cluster and takes those duties over when that one stops")
	default:
		a.log.Warn("another process leads the scheduler loop on this data dir: " + other +
			"; this " + what + " stands by and takes over when it stops")
	}
}

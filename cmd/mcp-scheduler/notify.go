package main

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
	"github.com/mcp-scheduler/mcp-scheduler/engine/notify"
)

// NotifyConfig is one [[notify]] section (docs/notifications.md): a webhook or a command,
// and which messages it takes.
type NotifyConfig struct {
	Name    string `toml:"name"`
	Webhook string `toml:"webhook"`
	// Secret signs the webhook's body; SecretEnv names an environment variable holding it
	// instead (one of them at most).
	Secret    string         `toml:"secret"`
	SecretEnv string         `toml:"secret_env"`
	Command   []string       `toml:"command"`
	Timeout   agent.Duration `toml:"timeout"`
	Events    []string       `toml:"events"`
	Voyages   []string       `toml:"voyages"`
}

// NotificationsConfig is [notifications]: how every sink's deliveries are retried.
type NotificationsConfig struct {
	RetryInitial agent.Duration `toml:"retry_initial"`
	RetryMax     agent.Duration `toml:"retry_max"`
	GiveUpAfter  agent.Duration `toml:"give_up_after"`
}

func defaultNotifications() NotificationsConfig {
	o := notify.DefaultOptions()
	return NotificationsConfig{RetryInitial: agent.Duration(o.RetryInitial), RetryMax: agent.Duration(o.RetryMax),
		GiveUpAfter: agent.Duration(o.GiveUpAfter)}
}

func (n NotificationsConfig) options() notify.Options {
	return notify.Options{RetryInitial: n.RetryInitial.D(), RetryMax: n.RetryMax.D(), GiveUpAfter: n.GiveUpAfter.D()}
}

// sinks turns the [[notify]] sections into sinks (defaults filled, secrets read from env)
// with every problem found, each naming its key.
func (c *Config) sinks(env getenv) ([]notify.Sink, []error) {
	var out []notify.Sink
	var errs []error
	if env == nil {
		env = func(string) string { return "" }
	}
	for i, n := range c.Notify {
		key := fmt.Sprintf("notify[%d]", i)
		s := notify.Sink{Name: n.Name, Webhook: n.Webhook, Secret: n.Secret, Command: n.Command,
			Timeout: n.Timeout.D(), Events: n.Events, Voyages: n.Voyages}
		if s.Name == "" {
			s.Name = fmt.Sprintf("notify-%d", i+1)
		}
		if s.Timeout == 0 {
			s.Timeout = notify.DefaultTimeout
		}
		switch {
		case n.SecretEnv != "" && n.Secret != "":
			errs = append(errs, fmt.Errorf("%s.secret_env: set secret or secret_env, not both", key))
		case n.SecretEnv != "" && strings.TrimSpace(env(n.SecretEnv)) == "":
			errs = append(errs, fmt.Errorf("%s.secret_env: the environment variable %s is not set (or empty): export it or remove secret_env", key, n.SecretEnv))
		case n.SecretEnv != "":
			s.Secret = strings.TrimSpace(env(n.SecretEnv))
		}
		errs = append(errs, s.Check(key)...)
		out = append(out, s)
	}
	errs = append(errs, notify.CheckNames(out)...)
	if len(c.Notify) > 0 {
		errs = append(errs, c.Notifications.options().Check("notifications")...)
	}
	return out, errs
}

// startNotifier runs the notifier of the configured sinks (none: nothing runs) while this
// process leads the loop; the returned function stops it and waits.
func (a *app) startNotifier(ctx context.Context, l *loop) (stop func()) {
	sinks, errs := a.cfg.sinks(a.cfg.env)
	if len(sinks) == 0 || len(errs) > 0 { // validate reported the problems already
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	n := notify.New(a.eng, sinks, a.cfg.Notifications.options(), l.s.Leader, a.log.With("component", "notify"))
	var wg sync.WaitGroup
	wg.Go(func() { n.Run(ctx) })
	a.log.Info("notifications on", "sinks", len(sinks))
	return func() {
		cancel()
		wg.Wait()
	}
}

// notifyCheck is doctor's finding about the outbox: notices given up (a failure: someone
// missed a message), notices failing and retried (a warning), else how many sinks.
func (a *app) notifyCheck(ctx context.Context) check {
	c := check{Name: "notifications", OK: true}
	counts, gave, err := a.eng.NoticeSummary(ctx, 3)
	switch {
	case err != nil:
		c.OK, c.Detail = false, err.Error()
	case counts.GaveUp > 0:
		c.OK = false
		var last []string
		for _, g := range gave {
			last = append(last, fmt.Sprintf("%s %s (event %d) to %s, given up at %s: %s", notify.DeliveryID(g.EventSeq, g.Sink), g.Type, g.EventSeq, g.Sink,
				g.GaveUpAt.Format(time.RFC3339), g.LastError))
		}
		c.Detail = fmt.Sprintf("%d notifications given up (not sent), latest: %s", counts.GaveUp, strings.Join(last, "; "))
	case counts.Failing > 0:
		c.Warn = true
		c.Detail = fmt.Sprintf("%d of %d pending notifications failed at least once and are being retried (logs: component=notify)", counts.Failing, counts.Pending)
	case len(a.cfg.Notify) == 0:
		c.Detail = "none configured ([[notify]] in docs/notifications.md)"
	default:
		c.Detail = fmt.Sprintf("%d sinks; %d pending, none failing", len(a.cfg.Notify), counts.Pending)
	}
	return c
}

// notifyLine is status's line about notifications: "" while none is failing or given up.
func (a *app) notifyLine(ctx context.Context) string {
	c, _, err := a.eng.NoticeSummary(ctx, 0)
	switch {
	case err != nil:
		return "unknown: " + err.Error()
	case c.Failing == 0 && c.GaveUp == 0:
		return ""
	}
	return fmt.Sprintf("%d pending (%d failing and retried), %d given up (mcp-scheduler doctor names them)", c.Pending, c.Failing, c.GaveUp)
}

package main

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcp-scheduler/mcp-scheduler/tools"
	"github.com/mcp-scheduler/mcp-scheduler/tools/watch"
)

// minWatchInterval bounds --interval from below: a shorter one is a tight poll.
const minWatchInterval = 200 * time.Millisecond

func newWatchCmd(a *app) *cobra.Command {
	var interval time.Duration
	var once bool
	cmd := &cobra.Command{
		Use:   "watch",
		Short: "A live view: voyages, running agents, waiting missions and why, open escalations",
		Long: "Show the data dir live, refreshed on every change by this or another process: the voyages and\n" +
			"their missions, the running agents with their last progress line, the waiting missions with\n" +
			"why they wait, and the open escalations. Keys: ↑/↓ select, enter opens a mission, l follows its\n" +
			"log, r/s/c/a resolve the selected escalation (retry, skip, cancel, acknowledge; y confirms),\n" +
			"esc goes back, q quits. When stdout is not a terminal (piped, redirected) it prints plain text\n" +
			"instead: one snapshot each time what it shows changes (checked on every change and every\n" +
			"--interval), until interrupted; --once prints one and exits; --json prints each snapshot as\n" +
			"one JSON object per line.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if interval < minWatchInterval {
				return usageError{fmt.Errorf("--interval %v is too short: give %v or more (the view also refreshes on every change)", interval, minWatchInterval)}
			}
			if err := a.checkWatchStore(); err != nil {
				return err
			}
			if err := a.open(cmd.Context()); err != nil {
				return err
			}
			src := a.watchedSource(watch.EngineSource{Engine: a.eng, Actor: a.actor(),
				Logs: tools.FileLogs{DataDir: a.cfg.DataDir, Redact: a.redactor()}})
			if a.jsonOut { // the engine's own sentences, as every --json prints them
				return a.watchPlain(cmd.Context(), src, interval, once)
			}
			if once || !isTerminal(a.out) {
				return a.watchPlain(cmd.Context(), cliWordsSource{src}, interval, once)
			}
			return a.watchTerminal(cmd.Context(), cliWordsSource{src}, interval)
		},
	}
	cmd.Flags().DurationVar(&interval, "interval", 2*time.Second, "the longest between two refreshes when nothing changes (it also refreshes on every change)")
	cmd.Flags().BoolVar(&once, "once", false, "print one plain snapshot and exit")
	return cmd
}

// changes signals (coalesced, never blocking the engine) after every change committed to
// the data dir by this or another process, until ctx ends; stop waits for its goroutines.
func (a *app) changes(ctx context.Context) (<-chan struct{}, func()) {
	ctx, cancel := context.WithCancel(ctx)
	ch := make(chan struct{}, 1)
	sub := a.eng.Hub().Subscribe()
	var wg sync.WaitGroup
	wg.Go(func() { _ = a.eng.WatchExternal(ctx, externalPoll) })
	wg.Go(func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-sub.Ready():
				sub.Take()
				select {
				case ch <- struct{}{}:
				default:
				}
			}
		}
	})
	return ch, func() { cancel(); wg.Wait(); sub.Close() }
}

// watchTerminal runs the live view until q (or Ctrl-C, or ctx ends).
func (a *app) watchTerminal(ctx context.Context, src watch.Source, interval time.Duration) error {
	if a.logLevelFlag == "" && a.env(EnvLogLevel) == "" {
		a.level.Set(slog.LevelError) // log lines on stderr would tear the screen
	}
	ch, stop := a.changes(ctx)
	defer stop()
	err := watch.Run(ctx, watch.Options{Source: src, Changes: ch, Interval: interval}, a.in, a.out)
	if ctx.Err() != nil { // interrupted (SIGINT, SIGTERM): a normal end
		return nil
	}
	return err
}

// watchPlain prints a plain snapshot whenever what it shows changed (the time line aside),
// checking on every change and every interval (at most once per watch.MinRefreshGap), until
// ctx ends; once prints one and returns.
func (a *app) watchPlain(ctx context.Context, src watch.Source, interval time.Duration, once bool) error {
	ch, stop := a.changes(ctx)
	defer stop()
	last := ""
	for first := true; ; first = false {
		s, err := src.Snapshot(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		text := watch.Plain(s)
		if body := plainBody(text); body != last {
			last = body
			if err := a.printSnapshot(s, text, first); err != nil {
				return err
			}
		}
		if once || !watch.Pause(ctx, watch.MinRefreshGap) {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-ch:
		case <-time.After(interval):
		}
	}
}

// printSnapshot prints one snapshot: a JSON line with --json, else the text after a blank
// line.
func (a *app) printSnapshot(s watch.Snapshot, text string, first bool) error {
	if a.jsonOut {
		line, err := jsonLine(s)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(a.out, line)
		return err
	}
	if !first {
		text = "\n" + text
	}
	_, err := fmt.Fprint(a.out, text)
	return err
}

// plainBody is a plain snapshot without its first line (the time), for comparing two.
func plainBody(text string) string {
	_, body, _ := strings.Cut(text, "\n")
	return body
}

package watch

import (
	"context"
	"io"
	"time"

	tea "github.com/charmbracelet/bubbletea"
)

// Run shows the live view on out (a terminal, in its alternate screen) reading keys from in,
// until q or Ctrl-C (nil) or ctx ends (ctx's error). It refreshes the view on every value from
// opt.Changes and at least every opt.Interval.
func Run(ctx context.Context, opt Options, in io.Reader, out io.Writer) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if opt.Interval <= 0 {
		opt.Interval = 2 * time.Second
	}
	opt.Context = ctx
	p := tea.NewProgram(NewModel(opt), tea.WithContext(ctx), tea.WithInput(in), tea.WithOutput(out), tea.WithAltScreen())
	done := make(chan struct{})
	go func() {
		defer close(done)
		pump(ctx, p, opt.Changes, opt.Interval)
	}()
	_, err := p.Run()
	cancel()
	<-done
	if ctx.Err() != nil && err != nil {
		return ctx.Err()
	}
	return err
}

// MinRefreshGap is the least time between two refreshes: the changes that come meanwhile
// wait for the next one. A snapshot of a busy data dir costs tens of milliseconds
// (BenchmarkLoad, docs/benchmarks.md), and agents commit progress and heartbeats often, so
// refreshing on each change at once could keep a core busy; this keeps the view to at most
// four reads a second.
const MinRefreshGap = 250 * time.Millisecond

// pump sends Refresh on every change and after every interval without one, at most once per
// MinRefreshGap, until ctx ends.
func pump(ctx context.Context, p *tea.Program, changes <-chan struct{}, interval time.Duration) {
	t := time.NewTimer(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-changes:
		case <-t.C:
		}
		p.Send(Refresh{})
		if !Pause(ctx, MinRefreshGap) {
			return
		}
		t.Reset(interval)
	}
}

// Pause waits d or until ctx ends; it reports whether d passed.
func Pause(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

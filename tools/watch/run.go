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

// pump sends Refresh on every change and after every interval without one, until ctx ends.
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
		t.Reset(interval)
	}
}

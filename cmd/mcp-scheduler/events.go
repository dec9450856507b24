package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

func newEventsCmd(a *app) *cobra.Command {
	var after int64
	var mission, voyage string
	var types []string
	var limit int
	var follow bool
	cmd := &cobra.Command{
		Use:   "events",
		Short: "Print the event log (--follow keeps printing new events)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := firstError(checkLimit(limit, 10000), checkOptionalID("mission_id", domain.PrefixMission, mission),
				checkOptionalID("voyage_id", domain.PrefixVoyage, voyage)); err != nil {
				return err
			}
			if err := a.open(cmd.Context()); err != nil {
				return err
			}
			f := engine.EventFilter{AfterSeq: after, MissionID: mission, VoyageID: voyage, Types: types, Limit: limit}
			if !follow {
				evs, err := a.eng.Events(cmd.Context(), f)
				if err != nil {
					return err
				}
				return a.printEvents(evs)
			}
			return a.followEvents(cmd.Context(), f)
		},
	}
	fl := cmd.Flags()
	fl.Int64Var(&after, "after", 0, "only events after this sequence number")
	fl.StringVar(&mission, "mission", "", "only events of this mission")
	fl.StringVar(&voyage, "voyage", "", "only events of this voyage")
	fl.StringArrayVar(&types, "type", nil, "only events of this type, e.g. mission.completed (repeatable)")
	fl.IntVar(&limit, "limit", 1000, "at most this many per read (1 to 10000)")
	fl.BoolVarP(&follow, "follow", "f", false, "keep printing new events until interrupted")
	return cmd
}

// followEvents prints events as they are committed, by this or any other process on the
// same database, until ctx ends (Ctrl-C).
func (a *app) followEvents(ctx context.Context, f engine.EventFilter) error {
	sub := a.eng.Hub().Subscribe()
	defer sub.Close()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() { _ = a.eng.WatchExternal(ctx, 200*time.Millisecond) })
	for {
		sub.Take()
		evs, err := a.eng.Events(ctx, f)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		if err := a.printEvents(evs); err != nil {
			return err
		}
		if n := len(evs); n > 0 {
			f.AfterSeq = evs[n-1].Seq
			if n == f.Limit || (f.Limit == 0 && n >= 500) {
				continue // more are waiting
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-sub.Ready():
		}
	}
}

func (a *app) printEvents(evs []domain.Event) error {
	if a.jsonOut { // one JSON object per line, so that a follower can be piped
		for _, e := range evs {
			b, err := jsonLine(e)
			if err != nil {
				return err
			}
			if _, err := fmt.Fprintln(a.out, b); err != nil {
				return err
			}
		}
		return nil
	}
	for _, e := range evs {
		id := e.MissionID
		if id == "" {
			id = e.VoyageID
		}
		if err := printShown(a.out, "%6d  %s  %-24s %-30s %-14s %s\n", e.Seq, e.At.Local().Format("15:04:05.000"),
			e.Type, orDash(id), orDash(e.Actor), cut(cellText(string(e.Data)), 100)); err != nil {
			return err
		}
	}
	return nil
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

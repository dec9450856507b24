package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcp-scheduler/mcp-scheduler/tools"
)

// newNodesCmd lists a cluster's scheduler nodes (`nodes`) and forgets one that will not come
// back (`nodes forget NAME`): status then stops listing it as not running.
func newNodesCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{Use: "nodes", Short: "List the scheduler nodes sharing this store (cluster mode), live or not", Args: cobra.NoArgs}
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if err := a.open(cmd.Context()); err != nil {
			return err
		}
		ns, err := a.eng.Nodes(cmd.Context())
		if err != nil {
			return err
		}
		now := a.eng.Now()
		items := make([]tools.NodeItem, len(ns))
		for i, n := range ns {
			items[i] = tools.NodeItem{Name: n.Name, Live: n.Live(now), Owner: n.Owner, Since: n.Since, ExpiresAt: n.ExpiresAt, Phase: n.Phase}
		}
		if a.jsonOut {
			return writeJSON(a.out, map[string]any{"nodes": items})
		}
		if len(items) == 0 {
			_, err := fmt.Fprintln(a.out, "no scheduler node has run on this store (nodes are kept on PostgreSQL only: [storage] url)")
			return err
		}
		t := newTable(a.out, "NODE", "STATE", "OWNER", "SINCE", "LEASE")
		for _, n := range items {
			state, lease := "not running", "expired "+n.ExpiresAt.UTC().Format(time.RFC3339)
			if n.Live {
				state, lease = "live", "until "+n.ExpiresAt.UTC().Format(time.RFC3339)
			}
			t.row(n.Name, state, n.Owner, n.Since.UTC().Format(time.RFC3339), lease)
		}
		return t.flush()
	}
	cmd.AddCommand(newNodesForgetCmd(a))
	return cmd
}

func newNodesForgetCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "forget NAME",
		Short: "Remove a node that will not come back from the node list (its lease must have expired)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := a.open(cmd.Context()); err != nil {
				return err
			}
			if err := a.eng.NodeForget(cmd.Context(), args[0], a.actor()); err != nil {
				return err
			}
			if a.jsonOut {
				return writeJSON(a.out, map[string]any{"forgotten": args[0]})
			}
			err := printShown(a.out, "node %s forgotten: status no longer lists it (it joins again if it ever runs)\n", args[0])
			return err
		},
	}
}

package storetest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
)

// exerciseNodes covers NodeTry, NodeGet, NodeList and NodeResign (cluster mode's node leases:
// one row per node name, an epoch raised on every change of owner).
func exerciseNodes(t *testing.T, open Opener) {
	group(t, "NodeGet", func(t *testing.T) {
		run(t, "AnUnknownNodeIsFree", open, func(t *testing.T, e *env) {
			n := nodeGet(e, "n1")
			require.Equal(t, engine.Node{Name: "n1"}, n)
			require.False(t, n.Live(t0))
		})
	})
	group(t, "NodeTry", func(t *testing.T) {
		run(t, "TakesANewNode", open, func(t *testing.T, e *env) {
			n := nodeTry(e, engine.NodeTake{Name: "n1", Owner: "p1", Now: t0, TTL: 10 * time.Second, Phase: "idle"})
			require.Equal(t, engine.Node{Name: "n1", Owner: "p1", Epoch: 1, ExpiresAt: t0.Add(10 * time.Second), Since: t0, Phase: "idle"}, n)
			require.Equal(t, n, nodeGet(e, "n1"))
			require.True(t, n.Live(t0))
		})
		run(t, "RenewalKeepsEpochAndSince", open, func(t *testing.T, e *env) {
			n1 := nodeTry(e, engine.NodeTake{Name: "n1", Owner: "p1", Now: t0, TTL: 10 * time.Second})
			n2 := nodeTry(e, engine.NodeTake{Name: "n1", Owner: "p1", Now: t0.Add(5 * time.Second), TTL: 10 * time.Second, Phase: "dispatching"})
			require.Equal(t, n1.Epoch, n2.Epoch)
			require.Equal(t, t0, n2.Since)
			require.Equal(t, t0.Add(15*time.Second), n2.ExpiresAt)
			require.Equal(t, "dispatching", n2.Phase)
		})
		run(t, "RefusesALiveNodeOfAnotherProcess", open, func(t *testing.T, e *env) {
			n1 := nodeTry(e, engine.NodeTake{Name: "n1", Owner: "p1", Now: t0, TTL: 10 * time.Second})
			n2 := nodeTry(e, engine.NodeTake{Name: "n1", Owner: "p2", Now: t0.Add(9 * time.Second), TTL: 10 * time.Second})
			require.Equal(t, n1, n2, "p2 sees p1's row unchanged")
		})
		run(t, "TakesAnExpiredNodeUnderANewEpoch", open, func(t *testing.T, e *env) {
			n1 := nodeTry(e, engine.NodeTake{Name: "n1", Owner: "p1", Now: t0, TTL: 10 * time.Second})
			at := t0.Add(10 * time.Second)
			n2 := nodeTry(e, engine.NodeTake{Name: "n1", Owner: "p2", Now: at, TTL: 10 * time.Second})
			require.Equal(t, "p2", n2.Owner)
			require.Equal(t, n1.Epoch+1, n2.Epoch)
			require.Equal(t, at, n2.Since)
			n3 := nodeTry(e, engine.NodeTake{Name: "n1", Owner: "p2", Now: at.Add(11 * time.Second), TTL: 10 * time.Second})
			require.Equal(t, n2.Epoch+1, n3.Epoch, "its own lease renewed after expiry is taken anew")
		})
		run(t, "NodesAreIndependent", open, func(t *testing.T, e *env) {
			nodeTry(e, engine.NodeTake{Name: "n1", Owner: "p1", Now: t0, TTL: 10 * time.Second})
			n := nodeTry(e, engine.NodeTake{Name: "n2", Owner: "p2", Now: t0, TTL: 10 * time.Second})
			require.Equal(t, "p2", n.Owner)
			require.Equal(t, int64(1), n.Epoch)
		})
	})
	group(t, "NodeList", func(t *testing.T) {
		run(t, "EveryNodeByName", open, func(t *testing.T, e *env) {
			require.Empty(t, nodeList(e))
			nodeTry(e, engine.NodeTake{Name: "zeta", Owner: "p1", Now: t0, TTL: time.Second})
			nodeTry(e, engine.NodeTake{Name: "alpha", Owner: "p2", Now: t0, TTL: time.Minute})
			ns := nodeList(e)
			require.Len(t, ns, 2)
			require.Equal(t, "alpha", ns[0].Name)
			require.Equal(t, "zeta", ns[1].Name)
			require.Equal(t, t0.Add(time.Second), ns[1].ExpiresAt, "expired nodes are listed too")
		})
	})
	group(t, "NodeForget", func(t *testing.T) {
		run(t, "OnlyAnExpiredNode", open, func(t *testing.T, e *env) {
			nodeTry(e, engine.NodeTake{Name: "gone", Owner: "p1", Now: t0, TTL: time.Second})
			nodeTry(e, engine.NodeTake{Name: "live", Owner: "p2", Now: t0, TTL: time.Hour})
			at := t0.Add(time.Minute)
			forget := func(name string) bool {
				var ok bool
				e.update(func(tx engine.Tx) error {
					var err error
					ok, err = tx.NodeForget(e.ctx, name, at)
					return err
				})
				return ok
			}
			require.False(t, forget("live"), "a live node is not forgotten")
			require.False(t, forget("never"), "an unknown node: nothing to forget")
			require.True(t, forget("gone"))
			require.False(t, forget("gone"), "forgotten already")
			ns := nodeList(e)
			require.Len(t, ns, 1)
			require.Equal(t, "live", ns[0].Name)
		})
	})
	group(t, "NodeResign", func(t *testing.T) {
		run(t, "EndsTheLeaseOfItsOwnerOnly", open, func(t *testing.T, e *env) {
			n := nodeTry(e, engine.NodeTake{Name: "n1", Owner: "p1", Now: t0, TTL: time.Minute, Phase: "idle"})
			e.update(func(tx engine.Tx) error {
				if err := tx.NodeResign(e.ctx, "n1", "p2", n.Epoch, t0); err != nil {
					return err
				}
				return tx.NodeResign(e.ctx, "n1", "p1", n.Epoch-1, t0)
			})
			require.Equal(t, n, nodeGet(e, "n1"), "another owner or epoch changes nothing")
			at := t0.Add(time.Second)
			e.update(func(tx engine.Tx) error { return tx.NodeResign(e.ctx, "n1", "p1", n.Epoch, at) })
			got := nodeGet(e, "n1")
			require.Equal(t, at, got.ExpiresAt)
			require.False(t, got.Live(at))
			n2 := nodeTry(e, engine.NodeTake{Name: "n1", Owner: "p3", Now: at, TTL: time.Minute})
			require.Equal(t, "p3", n2.Owner, "a resigned node is taken at once")
			require.Equal(t, n.Epoch+1, n2.Epoch)
		})
	})
}

func nodeGet(e *env, name string) engine.Node {
	e.t.Helper()
	var n engine.Node
	e.view(func(r engine.Reader) error {
		var err error
		n, err = r.NodeGet(e.ctx, name)
		return err
	})
	return normNode(n)
}

func nodeList(e *env) []engine.Node {
	e.t.Helper()
	var ns []engine.Node
	e.view(func(r engine.Reader) error {
		var err error
		ns, err = r.NodeList(e.ctx)
		return err
	})
	for i := range ns {
		ns[i] = normNode(ns[i])
	}
	return ns
}

func nodeTry(e *env, nt engine.NodeTake) engine.Node {
	e.t.Helper()
	var n engine.Node
	e.update(func(tx engine.Tx) error {
		var err error
		n, err = tx.NodeTry(e.ctx, nt)
		return err
	})
	return normNode(n)
}

func normNode(n engine.Node) engine.Node {
	n.ExpiresAt, n.Since = normTime(n.ExpiresAt), normTime(n.Since)
	return n
}

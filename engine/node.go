package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// Node is one scheduler node's lease (cluster mode: several scheduler processes share one
// PostgreSQL store, each with its own data dir and agents). The node's name is stable across
// restarts — the missions it leases record it (domain.Mission.Node) — and one process at a time
// runs a node: the lease's owner, renewed while it lives, under an epoch raised on every
// change of owner. A node that stops renewing loses its lease at expiry; the cluster leader
// then reaps the mission leases it held, as for any agent that went silent.
type Node struct {
	Name      string    `json:"name"`
	Owner     string    `json:"owner"`      // the process running the node (host:pid:random)
	Epoch     int64     `json:"epoch"`      // raised on every change of owner
	ExpiresAt time.Time `json:"expires_at"` // the lease runs out then unless renewed
	Since     time.Time `json:"since"`      // when Owner took the node
	Phase     string    `json:"phase,omitempty"`
}

// Live reports whether the node's lease is current at now.
func (n Node) Live(now time.Time) bool { return n.Owner != "" && n.ExpiresAt.After(now) }

// NodeTake is one attempt to take or renew a node lease (Tx.NodeTry).
type NodeTake struct {
	Name, Owner, Phase string
	Now                time.Time
	TTL                time.Duration
}

// NodeFence names the node lease a scheduler process believes it holds; an acquire that
// presents one (AcquireRequest.Node) succeeds only while it is current (same owner and epoch,
// not expired), checked in the acquire's own transaction, and records the node's name on the
// mission.
type NodeFence struct {
	Name  string
	Owner string
	Epoch int64
}

// NodeLease takes or renews the node lease of t.Name for t.Owner (t.Now is the engine's
// clock when zero) and returns the row after the attempt: Owner != t.Owner when another live
// process runs that node. A take under a new epoch records a node.joined event.
func (e *Engine) NodeLease(ctx context.Context, t NodeTake) (Node, error) {
	if err := CheckNodeName(t.Name); err != nil {
		return Node{}, err
	}
	var n Node
	err := e.update(ctx, t.Owner, func(o *op) error {
		before, err := o.tx.NodeGet(o.ctx, t.Name)
		if err != nil {
			return err
		}
		take := t
		take.Now = o.now
		if n, err = o.tx.NodeTry(o.ctx, take); err != nil {
			return err
		}
		if n.Epoch == before.Epoch || n.Owner != t.Owner {
			return nil
		}
		return o.emit("node.joined", nil, "", map[string]any{"node": n.Name, "owner": n.Owner, "epoch": n.Epoch,
			"expires_at": n.ExpiresAt, "previous_owner": before.Owner, "previous_epoch": before.Epoch})
	})
	return n, err
}

// NodeResign ends a node lease this process holds (owner at epoch) at once, so that a
// restart of the node on the same data dir takes it without waiting for its expiry.
func (e *Engine) NodeResign(ctx context.Context, name, owner string, epoch int64) error {
	return e.update(ctx, owner, func(o *op) error {
		n, err := o.tx.NodeGet(o.ctx, name)
		if err != nil || n.Owner != owner || n.Epoch != epoch {
			return err
		}
		if err := o.tx.NodeResign(o.ctx, name, owner, epoch, o.now); err != nil {
			return err
		}
		return o.emit("node.left", nil, "", map[string]any{"node": name, "owner": owner, "epoch": epoch})
	})
}

// NodeForget removes a node that will not come back from the store's node list (status and
// doctor then stop listing it as not running). Errors: *domain.NotFoundError for a node never
// seen; *domain.FieldError for one whose lease is still live (stop it first, or wait for
// its lease to expire).
func (e *Engine) NodeForget(ctx context.Context, name, actor string) error {
	return e.update(ctx, actor, func(o *op) error {
		n, err := o.tx.NodeGet(o.ctx, name)
		if err != nil {
			return err
		}
		if n.Owner == "" {
			return &domain.NotFoundError{Kind: "node", ID: name}
		}
		if n.Live(o.now) {
			return &domain.FieldError{Field: "node", Problem: fmt.Sprintf("%s is running (its lease, held by %s, expires at %s)",
				name, n.Owner, n.ExpiresAt.UTC().Format(time.RFC3339)), Hint: "stop that node first, or wait until its lease expires"}
		}
		forgot, err := o.tx.NodeForget(o.ctx, name, o.now)
		if err != nil || !forgot {
			return err
		}
		return o.emit("node.forgotten", nil, "", map[string]any{"node": name, "owner": n.Owner, "epoch": n.Epoch})
	})
}

// Nodes returns every node lease the store knows, live or not, by name.
func (e *Engine) Nodes(ctx context.Context) ([]Node, error) {
	return viewValue(ctx, e, func(r Reader) ([]Node, error) { return r.NodeList(ctx) })
}

// checkNode returns ErrNotLeader (wrapped, naming the node) unless f is the current,
// unexpired lease of its node.
func (o *op) checkNode(f *NodeFence) error {
	if f == nil {
		return nil
	}
	n, err := o.tx.NodeGet(o.ctx, f.Name)
	if err != nil {
		return err
	}
	if n.Owner != f.Owner || n.Epoch != f.Epoch || !n.ExpiresAt.After(o.now) {
		return fmt.Errorf("%w: node %s is held by %s at epoch %d until %s, not by %s at epoch %d", domain.ErrNotLeader,
			f.Name, orDefault(n.Owner, "nobody"), n.Epoch, n.ExpiresAt.Format(time.RFC3339Nano), f.Owner, f.Epoch)
	}
	return nil
}

// maxNodeName is the longest node name, in bytes.
const maxNodeName = 100

// CheckNodeName validates a node name ([node] name): 1 to 100 of ASCII letters, digits, '.',
// '_', '-' and ':' (it appears in logs, events and status lines). Errors are *domain.FieldError.
func CheckNodeName(name string) error {
	const hint = "use letters, digits, '.', '_', '-' or ':' (for example the host name)"
	if name == "" || len(name) > maxNodeName {
		return domain.Invalid("node", fmt.Sprintf("is %d bytes long, not 1 to %d", len(name), maxNodeName), hint)
	}
	if err := domain.CheckName("node", "node names", name); err != nil {
		return err
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-' || c == ':'
		if !ok {
			return domain.Invalid("node", fmt.Sprintf("holds %q at byte %d", c, i), hint)
		}
	}
	return nil
}

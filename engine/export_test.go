package engine

import "context"

// SetReapHook makes ReapExpired call hook between reading expired leases and updating them.
func SetReapHook(e *Engine, hook func()) { e.testHookReap = hook }

// AcquireLease is Engine.acquireLease (the claim's hot path: the lease without the row).
func AcquireLease(ctx context.Context, e *Engine, req AcquireRequest) (Acquired, error) {
	return e.acquireLease(ctx, req)
}

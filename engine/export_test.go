package engine

// SetReapHook makes ReapExpired call hook between reading expired leases and updating them.
func SetReapHook(e *Engine, hook func()) { e.testHookReap = hook }

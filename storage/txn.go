package storage

// txn implements engine.Tx (and so engine.Reader) over one transaction's querier: the
// writer's connection inside Update, a read transaction inside View.
type txn struct{ q querier }

//go:build race

package storage

// raceEnabled: the race detector slows SQLite-heavy tests about tenfold; the long concurrent
// runs (TestB09) do fewer rounds under it, with the same concurrency, and run in full without
// it (`go test ./storage`, and the heavy stage of .ci/test).
const raceEnabled = true

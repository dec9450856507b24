//go:build race

package engine_test

// raceEnabled: the race detector slows SQLite-heavy tests about tenfold; long randomised runs
// shorten under it (they run in full in the heavy suite, without -race).
const raceEnabled = true

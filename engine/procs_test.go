package engine_test

import (
	"fmt"
	"os"
)

// helperEnv makes the test binary act as a helper process (concurrency and crash suites):
// its value names the mode.
const helperEnv = "ENGINE_TEST_HELPER"

// helperModes maps a mode to its body; suites register theirs in init.
var helperModes = map[string]func() int{}

func runHelper() int {
	mode := os.Getenv(helperEnv)
	run, ok := helperModes[mode]
	if !ok {
		fmt.Fprintf(os.Stderr, "unknown helper mode %q\n", mode)
		return 2
	}
	return run()
}

package runner

import "os"

// darwinPipeBuffer is the buffer every pipe has on macOS (it may grow, never shrink below).
const darwinPipeBuffer = 16 << 10

// pipeHolds reports whether the empty pipe whose write end is f can take n bytes without
// blocking: macOS cannot resize a pipe, so only what fits its initial buffer.
func pipeHolds(_ *os.File, n int) bool { return n <= darwinPipeBuffer }

package runner

import (
	"os"

	"golang.org/x/sys/unix"
)

// pipeHolds reports whether the empty pipe whose write end is f can take n bytes without
// blocking, growing its buffer (F_SETPIPE_SZ, up to /proc/sys/fs/pipe-max-size) when needed.
func pipeHolds(f *os.File, n int) bool {
	fd := int(f.Fd())
	size, err := unix.FcntlInt(uintptr(fd), unix.F_GETPIPE_SZ, 0)
	if err != nil {
		return false
	}
	if size >= n {
		return true
	}
	size, err = unix.FcntlInt(uintptr(fd), unix.F_SETPIPE_SZ, n)
	return err == nil && size >= n
}

package runner

import (
	"os"

	"golang.org/x/sys/unix"
)

// pipeHolds reports whether the empty pipe whose write end is f can take n bytes without
// blocking, growing its buffer (F_SETPIPE_SZ, up to /proc/sys/fs/pipe-max-size) when needed.
// It goes through SyscallConn, not Fd, which would put the pipe in blocking mode.
func pipeHolds(f *os.File, n int) bool {
	rc, err := f.SyscallConn()
	if err != nil {
		return false
	}
	holds := false
	err = rc.Control(func(fd uintptr) {
		size, err := unix.FcntlInt(fd, unix.F_GETPIPE_SZ, 0)
		if err == nil && size < n {
			size, err = unix.FcntlInt(fd, unix.F_SETPIPE_SZ, n)
		}
		holds = err == nil && size >= n
	})
	return err == nil && holds
}

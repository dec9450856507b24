package runner

import (
	"errors"
	"syscall"

	"golang.org/x/sys/unix"
)

// alive reports whether pid is the process that had the given start identity and has not
// ended (a zombie has ended).
func alive(pid int, start string) bool {
	if pid <= 0 || start == "" {
		return false
	}
	s, zombie, err := procStart(pid)
	return err == nil && !zombie && s == start
}

// groupGone reports whether no process of group pgid exists any more (zombies count as
// existing until reaped).
func groupGone(pgid int) bool {
	return errors.Is(syscall.Kill(-pgid, 0), syscall.ESRCH)
}

// signalGroup sends sig to every process of group pgid; a group that is already gone is not
// an error.
func signalGroup(pgid int, sig syscall.Signal) error {
	if pgid <= 1 {
		return errors.New("refusing to signal process group <= 1")
	}
	err := syscall.Kill(-pgid, sig)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}

// signalName returns "SIGTERM" etc. for sig.
func signalName(sig syscall.Signal) string {
	if n := unix.SignalName(sig); n != "" {
		return n
	}
	return "signal " + sig.String()
}

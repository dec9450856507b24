package runner

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// procStart returns an identity for the process pid: its start time in microseconds, from
// the kern.proc.pid sysctl. zombie reports a process that ended and waits to be reaped.
func procStart(pid int) (start string, zombie bool, err error) {
	kp, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil {
		return "", false, fmt.Errorf("process %d: %w", pid, err)
	}
	if kp.Proc.P_pid != int32(pid) {
		return "", false, fmt.Errorf("process %d: not found", pid)
	}
	tv := kp.Proc.P_starttime
	return fmt.Sprintf("%d.%06d", tv.Sec, tv.Usec), kp.Proc.P_stat == 5 /* SZOMB */, nil
}

// becomeSubreaper is Linux-only; on macOS orphans go to launchd, which reaps them.
func becomeSubreaper() bool { return false }

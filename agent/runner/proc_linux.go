package runner

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

var bootID = sync.OnceValue(func() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return "unknown-boot"
	}
	return strings.TrimSpace(string(b))
})

// procStart returns an identity for the process pid: the boot id and its start time in clock
// ticks since boot (field 22 of /proc/<pid>/stat, proc(5)). zombie reports a process that
// ended and waits to be reaped.
func procStart(pid int) (start string, zombie bool, err error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "", false, fmt.Errorf("process %d: %w", pid, err)
	}
	// The command name (field 2) is in parentheses and may itself hold spaces and ")".
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return "", false, fmt.Errorf("process %d: malformed stat", pid)
	}
	fields := strings.Fields(string(b[i+1:]))
	// fields[0] is field 3 (state); field 22 is fields[19].
	if len(fields) < 20 {
		return "", false, fmt.Errorf("process %d: malformed stat", pid)
	}
	return bootID() + ":" + fields[19], fields[0] == "Z", nil
}

// becomeSubreaper makes orphaned descendants of this process its children
// (PR_SET_CHILD_SUBREAPER), so the shim reaps the agent's grandchildren and none is left a
// zombie.
func becomeSubreaper() bool {
	return unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == nil
}

package testenv

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
)

// ProcessesIn lists the live processes other than this one whose working directory is dir
// or inside it (read from /proc, so Linux only), each as "pid args (in cwd)": how a test
// waits for the orphaned children of a killed process (a git left by a SIGKILLed helper) to
// finish before it inspects what they worked on. A zombie, whose cwd is gone, is not listed.
func ProcessesIn(dir string) []string {
	entries, _ := os.ReadDir("/proc")
	var out []string
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		base := filepath.Join("/proc", e.Name())
		cwd, err := os.Readlink(filepath.Join(base, "cwd"))
		if err != nil || (cwd != dir && !bytes.HasPrefix([]byte(cwd), []byte(dir+string(filepath.Separator)))) {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join(base, "cmdline"))
		args := string(bytes.ReplaceAll(bytes.TrimRight(cmdline, "\x00"), []byte{0}, []byte{' '}))
		out = append(out, strconv.Itoa(pid)+" "+args+" (in "+cwd+")")
	}
	return out
}

package main

import (
	"bufio"
	"os"
	"regexp"
	"strconv"
	"strings"
)

// procMem is what /proc/<pid>/status says of a process's memory (KB) and threads.
type procMem struct {
	rss, anon, file int64
	threads         int
}

// procStatus reads VmRSS, RssAnon, RssFile (KB) and Threads from /proc/<pid>/status (Linux;
// zeros elsewhere).
func procStatus(pid int) (m procMem) {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return m
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), ":")
		fields := strings.Fields(v)
		if len(fields) == 0 {
			continue
		}
		switch k {
		case "VmRSS":
			m.rss, _ = strconv.ParseInt(fields[0], 10, 64)
		case "RssAnon":
			m.anon, _ = strconv.ParseInt(fields[0], 10, 64)
		case "RssFile":
			m.file, _ = strconv.ParseInt(fields[0], 10, 64)
		case "Threads":
			m.threads, _ = strconv.Atoi(fields[0])
		}
	}
	return m
}

var memStatLine = regexp.MustCompile(`(?m)^# (Sys|HeapInuse) = (\d+)$`)

// goMem parses the runtime.MemStats lines of a heap?debug=1 profile: Sys and HeapInuse in
// bytes (what the Go runtime holds; the rest of the RSS is SQLite's C heap and the binary).
func goMem(profile []byte) (sys, heapInuse int64) {
	for _, m := range memStatLine.FindAllSubmatch(profile, -1) {
		v, _ := strconv.ParseInt(string(m[2]), 10, 64)
		if string(m[1]) == "Sys" {
			sys = v
		} else {
			heapInuse = v
		}
	}
	return sys, heapInuse
}

func countDir(dir string) int {
	es, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	return len(es)
}

var pprofLine = regexp.MustCompile(`serving pprof .*?addr=(\S+)`)

// pprofFromLog finds the address the server logged for its pprof listener.
func pprofFromLog(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	if m := pprofLine.FindSubmatch(b); m != nil {
		return string(m[1])
	}
	return ""
}

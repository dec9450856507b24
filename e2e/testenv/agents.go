package testenv

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// pidRecord is what KillAgentsOf reads of an attempt's pid.json (agent/runner's PIDRecord,
// read without importing the runner, whose own tests use this package).
type pidRecord struct {
	ShimPID   int    `json:"shim_pid"`
	ShimStart string `json:"shim_start"`
	PGID      int    `json:"pgid"`
}

// KillAgentsOf kills what is left of the managed agents of a data directory: every process in
// an agent's process group and the shim, as their pid.json records them (a shim only while it
// is the process recorded, by its start time). A managed agent outlives the server that
// started it (the next one re-attaches it), so a failing test whose agents wait (@hang) would
// otherwise leave them running. Linux only (/proc); elsewhere it does nothing.
func KillAgentsOf(dataDir string) {
	files, _ := filepath.Glob(filepath.Join(dataDir, "attempts", "*", "a*", "pid.json"))
	for _, f := range files {
		var rec pidRecord
		if b, err := os.ReadFile(f); err != nil || json.Unmarshal(b, &rec) != nil || rec.PGID <= 0 {
			continue
		}
		for _, pid := range GroupMembers(rec.PGID) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		if rec.ShimPID > 0 && SameProcess(rec.ShimPID, rec.ShimStart) {
			_ = syscall.Kill(rec.ShimPID, syscall.SIGKILL)
		}
	}
}

// procStat reads a process's state, process group and start time (clock ticks).
func procStat(pid int) (state string, pgrp int, start string, ok bool) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return "", 0, "", false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return "", 0, "", false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 {
		return "", 0, "", false
	}
	pgrp, _ = strconv.Atoi(f[2])
	return f[0], pgrp, f[19], true
}

// GroupMembers lists the live (non-zombie) processes of process group pgid (none for pgid <= 0).
func GroupMembers(pgid int) []int {
	if pgid <= 0 {
		return nil
	}
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if state, pg, _, ok := procStat(pid); ok && pg == pgid && state != "Z" {
			out = append(out, pid)
		}
	}
	return out
}

// SameProcess reports whether pid runs (not a zombie) and started at start (the runner records
// "<boot id>:<start time in clock ticks>" on Linux; empty: any start).
func SameProcess(pid int, start string) bool {
	state, _, st, ok := procStat(pid)
	if !ok || state == "Z" {
		return false
	}
	if i := strings.LastIndexByte(start, ':'); i >= 0 {
		start = start[i+1:]
	}
	return start == "" || st == start
}

package scheduler

import (
	"math"
	"runtime"

	"github.com/shirou/gopsutil/v4/disk"
	"github.com/shirou/gopsutil/v4/load"
	"github.com/shirou/gopsutil/v4/mem"

	"github.com/mcp-scheduler/mcp-scheduler/engine/planner"
)

// Reading is one resource threshold against its current reading (planner.Reading: the
// planner applies the gate, ReadResources takes the readings).
type Reading = planner.Reading

// ReadResources takes the readings the gate compares with r: the load average (less ours, the
// number of our own agents that run), available memory and free disk on dataDir. A threshold
// of 0 is still read, and never short.
func ReadResources(r Resources, dataDir string, ours int) []Reading {
	cpus := float64(runtime.NumCPU())
	out := []Reading{{Name: "load_per_cpu", Threshold: r.MaxLoadPerCPU},
		{Name: "available_memory_mb", Threshold: float64(r.MinFreeMemMB)},
		{Name: "free_disk_mb", Threshold: float64(r.MinFreeDiskMB)}}
	if avg, err := load.Avg(); err != nil {
		out[0].Err = err.Error()
	} else {
		out[0].Raw = round2(avg.Load1 / cpus)
		out[0].Value = round2(math.Max(avg.Load1-float64(ours), 0) / cpus)
		out[0].Short = r.MaxLoadPerCPU > 0 && out[0].Value > r.MaxLoadPerCPU
	}
	if vm, err := mem.VirtualMemory(); err != nil {
		out[1].Err = err.Error()
	} else {
		out[1].Value = float64(vm.Available >> 20)
		out[1].Short = r.MinFreeMemMB > 0 && vm.Available>>20 < r.MinFreeMemMB
	}
	if du, err := disk.Usage(dataDir); err != nil {
		out[2].Err = err.Error()
	} else {
		out[2].Value = float64(du.Free >> 20)
		out[2].Short = r.MinFreeDiskMB > 0 && du.Free>>20 < r.MinFreeDiskMB
	}
	return out
}

func round2(x float64) float64 { return math.Round(x*100) / 100 }

// ResourceCap is the resource gate (planner.ResourceCap, where the rule is stated): how many
// of our managed agents may run at once given the readings, and why fewer.
func ResourceCap(readings []Reading, limit int) (cap int, why string, ok bool) {
	return planner.ResourceCap(readings, limit)
}

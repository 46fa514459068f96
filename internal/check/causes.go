package check

import (
	"fmt"
	"sort"
	"strings"

	"etcdbench/internal/result"
	"etcdbench/internal/units"
	"etcdbench/internal/verdict"
)

// Cause is what a failing or warning verdict points at, and what to do.
type Cause struct {
	Name   string // e.g. "slow disk"
	Advice string
	// Rank orders causes, lowest first: the disk, which etcd waits on for
	// every write, before what follows from it.
	Rank int
}

// The causes the check names.
var (
	NotDurable = Cause{Name: "fast because writes are not made durable", Rank: 0, Advice: "a mount option stops fdatasync from flushing the disk's cache, so every latency figure above is that of a volatile cache " +
		"and etcd can lose writes it acknowledged at a power failure or host crash; remount without the option (the verdict names it) and run the check again before trusting any figure"}
	SlowDisk = Cause{Name: "slow disk", Rank: 1, Advice: "move etcd's data dir (at least its WAL, --wal-dir) to a faster disk of its own (local SSD/NVMe); " +
		"keep other writers off it or lower their I/O priority (ionice -c2 -n7, or -c3 for batch jobs); on cloud volumes, provision more IOPS"}
	FakeSync = Cause{Name: "fdatasync does not reach stable storage", Rank: 2, Advice: "the filesystem or a cache acknowledges syncs it has not made durable " +
		"(tmpfs, a write cache without power-loss protection, a hypervisor setting): etcd can lose acknowledged writes on a crash; use storage that honours flushes"}
	BusyMember = Cause{Name: "busy or starved etcd member", Rank: 3, Advice: "elections or slow applies during the load: give etcd dedicated CPU (and a disk of its own), " +
		"and if the disk and CPU are fine, raise --heartbeat-interval and --election-timeout (e.g. 250 ms / 2.5 s) for slow networks; run etcdbench diagnose on the cluster"}
	UnsuitableStorage = Cause{Name: "storage etcd's docs advise against", Rank: 2, Advice: "network filesystems and container writable layers put a network, a daemon or overlayfs between etcd and the disk; " +
		"give etcd's data dir a local SSD/NVMe disk or block volume mounted into the container"}
	SlowRecovery = Cause{Name: "slow sequential reads", Rank: 4, Advice: "a member that restarts or joins reads its snapshot and WAL at this speed; use faster storage for large clusters"}
)

// causeOf maps verdict check IDs to their cause, as data.
var causeOf = map[string]Cause{
	"wal_fsync_p99":                 SlowDisk,
	"wal_fsync_p99_under_load":      SlowDisk,
	"backend_commit_p99":            SlowDisk,
	"sync_iops_min":                 SlowDisk,
	"sync_iops_heavy":               SlowDisk,
	"check_perf_throughput":         SlowDisk,
	"capacity_min":                  SlowDisk,
	verdict.CheckMountFlushDisabled: NotDurable,
	verdict.CheckNetworkFS:          UnsuitableStorage,
	verdict.CheckContainerLayer:     UnsuitableStorage,
	"sync_implausibly_fast":         FakeSync,
	"rotational_sync_fast":          FakeSync,
	"leader_changes":                BusyMember,
	"slow_applies":                  BusyMember,
	"recovery_bandwidth":            SlowRecovery,
	"recovery_bandwidth_large":      SlowRecovery,
}

// Finding is one cause with the verdicts that point at it.
type Finding struct {
	Cause    Cause
	Status   verdict.Status // the worst of its verdicts
	Evidence []string       // "workload: title value (limit)"
}

// Findings groups the workloads' FAIL and WARN verdicts by cause, worst
// status first, then by cause rank. Verdicts of no known cause are
// grouped under their own title.
func Findings(ws []result.Workload) []Finding {
	byName := map[string]*Finding{}
	var out []*Finding
	for _, w := range ws {
		for _, v := range w.Verdicts {
			if v.Status != verdict.Fail && v.Status != verdict.Warn {
				continue
			}
			c, ok := causeOf[v.Check]
			if verdict.IsDurabilityFailure(v) {
				c, ok = NotDurable, true
			}
			if !ok && strings.HasPrefix(v.Check, "wal_fsync") {
				c, ok = SlowDisk, true
			}
			if !ok {
				c = Cause{Name: v.Title, Rank: 100, Advice: "see the verdict's detail above"}
			}
			f := byName[c.Name]
			if f == nil {
				f = &Finding{Cause: c, Status: v.Status}
				byName[c.Name] = f
				out = append(out, f)
			}
			if v.Status > f.Status {
				f.Status = v.Status
			}
			f.Evidence = append(f.Evidence, fmt.Sprintf("%s: %s %s %s (limit %s %s)", w.Name, v.Status, v.Title, units.FormatValue(v.Value, v.Unit), v.Comparison, units.FormatValue(v.Limit, v.Unit)))
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Status != out[j].Status {
			return out[i].Status > out[j].Status
		}
		return out[i].Cause.Rank < out[j].Cause.Rank
	})
	res := make([]Finding, len(out))
	for i, f := range out {
		res[i] = *f
	}
	return res
}

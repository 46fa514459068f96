package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"etcdbench/bench/internal/search"
	"etcdbench/internal/etcdload/metrics"
)

// processCPU is the counter of etcd's CPU seconds a step reads from its
// /metrics (the disk histograms' names are search's).
const processCPU = "process_cpu_seconds_total"

// diskCounters are a block device's counters from /proc/diskstats.
type diskCounters struct {
	Writes       int64 `json:"writes"`
	SectorsWrite int64 `json:"sectors_written"`
	Flushes      int64 `json:"flushes"`
}

// parseDiskstats finds the device major:minor in /proc/diskstats' text:
// "MAJ MIN NAME reads rmerged rsectors rms writes wmerged wsectors wms
// inflight ioms weighted discards dmerged dsectors dms flushes fms".
// Kernels before 5.5 have no flush fields (0 then).
func parseDiskstats(b []byte, dev string) (diskCounters, error) {
	maj, min, _ := strings.Cut(dev, ":")
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) < 11 || f[0] != maj || f[1] != min {
			continue
		}
		n := func(i int) int64 {
			if i >= len(f) {
				return 0
			}
			v, _ := strconv.ParseInt(f[i], 10, 64)
			return v
		}
		return diskCounters{Writes: n(7), SectorsWrite: n(9), Flushes: n(18)}, nil
	}
	return diskCounters{}, fmt.Errorf("/proc/diskstats has no device %s", dev)
}

func (a diskCounters) sub(b diskCounters) diskCounters {
	return diskCounters{Writes: a.Writes - b.Writes, SectorsWrite: a.SectorsWrite - b.SectorsWrite, Flushes: a.Flushes - b.Flushes}
}

// step is one fixed-rate run of etcd's benchmark against a real etcd.
type step struct {
	Offered float64 `json:"offered_puts_per_sec"`
	// Conns and Clients are what benchmark sent with (absent in older
	// results: the params').
	Conns    int     `json:"conns,omitempty"`
	Clients  int     `json:"clients,omitempty"`
	Achieved float64 `json:"achieved_puts_per_sec"` // benchmark's Requests/sec
	Puts     int64   `json:"puts"`
	Errors   int64   `json:"errors"`
	TimedOut bool    `json:"timed_out,omitempty"` // benchmark did not finish in time and was stopped
	// Broken says why benchmark's report is missing or incomplete.
	Broken string `json:"broken,omitempty"`
	// WALP99 and CommitP99 are etcd's own, from its histograms' deltas
	// over the step (NaN when it observed none).
	WALP99    time.Duration `json:"wal_fsync_p99_ns"`
	CommitP99 time.Duration `json:"backend_commit_p99_ns"`
	WALFsyncs float64       `json:"wal_fsyncs"`
	Commits   float64       `json:"backend_commits"`
	// EtcdCPU is the CPU seconds etcd's process used over the step (its
	// process_cpu_seconds_total; 0 when it has none), BenchmarkCPU
	// benchmark's (its rusage): what the CPU side of the estimate
	// models, for each real etcd.
	EtcdCPU      float64 `json:"etcd_cpu_seconds,omitempty"`
	BenchmarkCPU float64 `json:"benchmark_cpu_seconds,omitempty"`
	// Device is the whole device's counters over the step (other
	// processes on the disk included); Cgroup the throttled cgroup's own
	// writes, when the storage has one.
	Device       diskCounters `json:"device"`
	CgroupWrites int64        `json:"cgroup_writes,omitempty"`
	CgroupBytes  int64        `json:"cgroup_bytes,omitempty"`
	Seconds      float64      `json:"seconds"`
	Pass         bool         `json:"pass"`
	Why          string       `json:"why"`
	// Vote: a run of the answer's vote (search.Vote).
	Vote bool `json:"vote,omitempty"`
}

// evidence fills the step's etcd figures from two scrapes of /metrics.
func (s *step) evidence(before, after metrics.Families) {
	s.WALP99, s.WALFsyncs = search.P99(before, after, search.WALFsync)
	s.CommitP99, s.Commits = search.P99(before, after, search.BackendCommit)
	b, errB := metrics.ValueOf(before, processCPU)
	a, errA := metrics.ValueOf(after, processCPU)
	if errB == nil && errA == nil && a >= b {
		s.EtcdCPU = a - b
	}
}

// judge decides the step, with the reason.
func (s *step) judge(l search.Limits) {
	fails := l.Failures(search.Step{Offered: s.Offered, Achieved: s.Achieved, Errors: s.Errors, Broken: s.Broken, WALP99: s.WALP99, CommitP99: s.CommitP99})
	s.Pass = len(fails) == 0
	if s.Pass {
		s.Why = fmt.Sprintf("WAL p99 %s, commit p99 %s, %.0f/s achieved", search.FmtDur(s.WALP99), search.FmtDur(s.CommitP99), s.Achieved)
	} else {
		s.Why = strings.Join(fails, "; ")
	}
}

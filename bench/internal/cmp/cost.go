package cmp

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"etcdbench/internal/sysinfo"
)

// A tracer's own cost (etcdbench trace, the exporter), measured directly
// rather than through etcd's throughput (which moves by 20 % between
// rounds on a shared 2-vCPU VM): the CPU time of the tracer's process,
// and the time the kernel spent running its BPF programs (bpf_stats,
// /proc/sys/kernel/bpf_stats_enabled, read per program from the
// "run_time_ns:" line of the tracer's descriptors in /proc/PID/fdinfo).
// Their sum over the traced window, as a share of the machine's CPU time
// in that window, is what the tracer took from etcd and its clients.

// bpfStatsPath switches the kernel's per-program run time accounting.
const bpfStatsPath = "/proc/sys/kernel/bpf_stats_enabled"

// EnableBPFStats turns the accounting on and returns the function that
// puts the old setting back.
func EnableBPFStats() (restore func(), err error) {
	old, err := os.ReadFile(bpfStatsPath)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", bpfStatsPath, err)
	}
	if err := os.WriteFile(bpfStatsPath, []byte("1"), 0o644); err != nil {
		return nil, fmt.Errorf("enabling BPF run time accounting (%s): %w", bpfStatsPath, err)
	}
	return func() { _ = os.WriteFile(bpfStatsPath, bytes.TrimSpace(old), 0o644) }, nil
}

// CostSample is a tracer process's cost so far.
type CostSample struct {
	At     time.Time
	ProcNs int64 // user + system CPU of the process, all threads
	BPFNs  int64 // run time of its BPF programs
}

// clockTick is USER_HZ, the unit of /proc/PID/stat's CPU times (100 on
// every Linux architecture etcdbench runs on).
const clockTick = 100

// SampleCost reads the cost of process pid so far.
func SampleCost(pid int) (CostSample, error) {
	s := CostSample{At: time.Now()}
	dir := filepath.Join("/proc", strconv.Itoa(pid))
	b, err := os.ReadFile(filepath.Join(dir, "stat"))
	if err != nil {
		return s, err
	}
	st, err := sysinfo.ParseProcStat(b)
	if err != nil {
		return s, err
	}
	s.ProcNs = int64(st.UTimeTicks+st.STimeTicks) * int64(time.Second/clockTick)
	ents, err := os.ReadDir(filepath.Join(dir, "fdinfo"))
	if err != nil {
		return s, err
	}
	for _, e := range ents {
		info, err := os.ReadFile(filepath.Join(dir, "fdinfo", e.Name()))
		if err != nil || !bytes.Contains(info, []byte("prog_type:")) {
			continue // gone meanwhile, or not a program (a link names its program too)
		}
		s.BPFNs += fdinfoValue(info, "run_time_ns")
	}
	return s, nil
}

// fdinfoValue returns the number on the line "key:" of an fdinfo file, 0
// without one.
func fdinfoValue(info []byte, key string) int64 {
	for _, line := range strings.Split(string(info), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if ok && k == key {
			n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n
		}
	}
	return 0
}

// Share is the tracer's CPU (its process and its programs) between two
// samples as a fraction of the machine's CPU time over that window.
func Share(a, b CostSample, cpus int) (procShare, bpfShare float64) {
	machine := float64(b.At.Sub(a.At).Nanoseconds()) * float64(cpus)
	if machine <= 0 {
		return 0, 0
	}
	return float64(b.ProcNs-a.ProcNs) / machine, float64(b.BPFNs-a.BPFNs) / machine
}

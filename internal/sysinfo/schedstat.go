package sysinfo

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// Schedstat is the scheduler's account of a thread (/proc/PID/task/TID/
// schedstat) or the sum over a process's threads.
type Schedstat struct {
	// RunNs is the time spent on a CPU; WaitNs the time spent runnable,
	// waiting on a run queue for one.
	RunNs, WaitNs uint64
	// Slices is the number of times a CPU was given.
	Slices uint64
}

// ErrSchedstat is returned for a schedstat line that does not parse.
var ErrSchedstat = errors.New("sysinfo: malformed schedstat")

// ParseSchedstat reads a schedstat line: three numbers, the time on a
// CPU and the time waiting for one in nanoseconds, and the timeslices
// (Documentation/scheduler/sched-stats.rst).
func ParseSchedstat(b []byte) (Schedstat, error) {
	fields := bytes.Fields(b)
	if len(fields) != 3 {
		return Schedstat{}, fmt.Errorf("%w: %d fields, want 3", ErrSchedstat, len(fields))
	}
	var v [3]uint64
	for i, f := range fields {
		n, err := strconv.ParseUint(string(f), 10, 64)
		if err != nil {
			return Schedstat{}, fmt.Errorf("%w: field %d is %q", ErrSchedstat, i+1, f)
		}
		v[i] = n
	}
	return Schedstat{RunNs: v[0], WaitNs: v[1], Slices: v[2]}, nil
}

// ReadProcessSchedstat sums the schedstat of every thread of pid, under
// root/proc. A thread that ends between the listing and its reading is
// skipped; one that ended before takes its counts with it, so two sums
// are comparable only when the process's threads live on (a Go
// program's do).
func ReadProcessSchedstat(root string, pid int) (Schedstat, error) {
	dir := filepath.Join(root, "proc", strconv.Itoa(pid), "task")
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return Schedstat{}, fmt.Errorf("sysinfo: listing the threads of process %d: %w", pid, err)
	}
	var sum Schedstat
	read := 0
	for _, t := range tasks {
		b, err := os.ReadFile(filepath.Join(dir, t.Name(), "schedstat"))
		if errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ESRCH) {
			continue
		}
		if err != nil {
			return Schedstat{}, fmt.Errorf("sysinfo: reading the scheduler statistics of thread %s of process %d (a kernel without CONFIG_SCHED_INFO has none): %w", t.Name(), pid, err)
		}
		s, err := ParseSchedstat(b)
		if err != nil {
			return Schedstat{}, fmt.Errorf("thread %s of process %d: %w", t.Name(), pid, err)
		}
		sum.RunNs += s.RunNs
		sum.WaitNs += s.WaitNs
		sum.Slices += s.Slices
		read++
	}
	if read == 0 {
		return Schedstat{}, fmt.Errorf("sysinfo: process %d has no threads left to read", pid)
	}
	return sum, nil
}

// WaitShare is the share of a process's runnable time between two sums
// that its threads spent waiting for a CPU: wait / (run + wait), 0..1;
// ok is false when nothing ran or a counter went back (a thread ended).
func WaitShare(before, after Schedstat) (share float64, ok bool) {
	if after.RunNs < before.RunNs || after.WaitNs < before.WaitNs {
		return 0, false
	}
	run, wait := after.RunNs-before.RunNs, after.WaitNs-before.WaitNs
	if run+wait == 0 {
		return 0, false
	}
	return float64(wait) / float64(run+wait), true
}

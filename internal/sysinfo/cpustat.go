package sysinfo

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// CPUTimes is the machine's CPU time from /proc/stat: the "cpu" line,
// summed over every CPU, in clock ticks (USER_HZ) since boot.
type CPUTimes struct {
	// Busy is user, nice, system, irq, softirq and steal (guest time is
	// counted inside user): time no runnable thread of this machine could
	// have had. Steal counts as busy, the hypervisor gave that time to
	// another guest.
	Busy uint64
	// Idle is idle and iowait: time a CPU had nothing to run.
	Idle uint64
	// CPUs is the number of "cpuN" lines: the online CPUs.
	CPUs int
}

// ErrCPUStat is returned for a /proc/stat without a readable "cpu" line.
var ErrCPUStat = errors.New("malformed /proc/stat")

// ParseCPUStat reads /proc/stat's "cpu" line (proc(5): user nice system
// idle iowait irq softirq steal guest guest_nice; kernels before 2.6.11
// have fewer, at least the first four) and counts the "cpuN" lines.
func ParseCPUStat(b []byte) (CPUTimes, error) {
	var t CPUTimes
	found := false
	// Lines, not a bufio.Scanner: the "intr" line of a large machine
	// outgrows a Scanner's 64 KiB.
	for line := range bytes.Lines(b) {
		fields := bytes.Fields(line)
		if len(fields) == 0 || !bytes.HasPrefix(fields[0], []byte("cpu")) {
			continue
		}
		if len(fields[0]) > 3 {
			if _, err := strconv.ParseUint(string(fields[0][3:]), 10, 32); err == nil {
				t.CPUs++
			}
			continue
		}
		if found {
			return CPUTimes{}, fmt.Errorf("%w: two \"cpu\" lines", ErrCPUStat)
		}
		if len(fields) < 5 {
			return CPUTimes{}, fmt.Errorf("%w: %d fields on the \"cpu\" line, want at least 4 counters", ErrCPUStat, len(fields))
		}
		for i, f := range fields[1:min(len(fields), 9)] {
			v, err := strconv.ParseUint(string(f), 10, 64)
			if err != nil {
				return CPUTimes{}, fmt.Errorf("%w: counter %d of the \"cpu\" line is %q", ErrCPUStat, i+1, f)
			}
			switch i {
			case 3, 4: // idle, iowait
				t.Idle += v
			default: // user, nice, system, irq, softirq, steal
				t.Busy += v
			}
		}
		found = true
	}
	if !found {
		return CPUTimes{}, fmt.Errorf("%w: no \"cpu\" line", ErrCPUStat)
	}
	return t, nil
}

// ReadCPUStat reads root/proc/stat.
func ReadCPUStat(root string) (CPUTimes, error) {
	b, err := os.ReadFile(filepath.Join(root, "proc", "stat"))
	if err != nil {
		return CPUTimes{}, fmt.Errorf("reading the machine's CPU time: %w", err)
	}
	return ParseCPUStat(b)
}

// BusyShare is the share of the machine's CPU time that was busy between
// two readings, 0..1; ok is false when no time passed or the counters
// went back (a reading of another machine, or a wrapped counter).
func BusyShare(before, after CPUTimes) (share float64, ok bool) {
	if after.Busy < before.Busy || after.Idle < before.Idle {
		return 0, false
	}
	busy, idle := after.Busy-before.Busy, after.Idle-before.Idle
	if busy+idle == 0 {
		return 0, false
	}
	return float64(busy) / float64(busy+idle), true
}

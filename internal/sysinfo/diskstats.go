package sysinfo

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// DiskStats is one device's line of /proc/diskstats: cumulative counters
// since boot (see the kernel's Documentation/admin-guide/iostats.rst).
type DiskStats struct {
	Name string
	// Major and Minor are the device number (fields 1 and 2), as stat's
	// st_dev gives it for a file on the device.
	Major, Minor uint32
	ReadIOs      uint64 // reads completed
	ReadSectors  uint64 // 512-byte sectors read
	ReadMs       uint64
	WriteIOs     uint64
	WriteSectors uint64
	WriteMs      uint64
	InFlight     uint64 // I/Os in progress now (not cumulative)
	IOMs         uint64 // time with at least one I/O in flight
	WeightedMs   uint64 // sum over I/Os of their time in queue and service
	FlushIOs     uint64 // flush requests completed (kernel >= 5.5)
	FlushMs      uint64
}

// ErrNoDevice is returned when diskstats has no line for a device.
var ErrNoDevice = errors.New("device not in /proc/diskstats")

// ParseDiskstats parses /proc/diskstats. Lines have 14 fields on old
// kernels, 18 with discard counters (4.18) and 20 with flush counters (5.5).
func ParseDiskstats(data []byte) (map[string]DiskStats, error) {
	out := map[string]DiskStats{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for line := 1; sc.Scan(); line++ {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		if len(f) < 14 {
			return nil, fmt.Errorf("/proc/diskstats line %d has %d fields, want at least 14", line, len(f))
		}
		nums := make([]uint64, len(f)-3)
		for i := range nums {
			v, err := strconv.ParseUint(f[i+3], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("/proc/diskstats line %d field %d: %w", line, i+4, err)
			}
			nums[i] = v
		}
		major, err1 := strconv.ParseUint(f[0], 10, 32)
		minor, err2 := strconv.ParseUint(f[1], 10, 32)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("/proc/diskstats line %d: device number %s:%s is not two decimal numbers", line, f[0], f[1])
		}
		d := DiskStats{
			Name: f[2], Major: uint32(major), Minor: uint32(minor), ReadIOs: nums[0], ReadSectors: nums[2], ReadMs: nums[3],
			WriteIOs: nums[4], WriteSectors: nums[6], WriteMs: nums[7],
			InFlight: nums[8], IOMs: nums[9], WeightedMs: nums[10],
		}
		if len(nums) >= 17 {
			d.FlushIOs, d.FlushMs = nums[15], nums[16]
		}
		out[d.Name] = d
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading /proc/diskstats: %w", err)
	}
	return out, nil
}

// ReadDiskstats returns the counters of one device (a kernel name such as
// vda or nvme0n1), reading root/proc/diskstats.
func ReadDiskstats(root, name string) (DiskStats, error) {
	b, err := os.ReadFile(filepath.Join(root, "proc", "diskstats"))
	if err != nil {
		return DiskStats{}, err
	}
	all, err := ParseDiskstats(b)
	if err != nil {
		return DiskStats{}, err
	}
	d, ok := all[name]
	if !ok {
		return DiskStats{}, fmt.Errorf("%w: %s", ErrNoDevice, name)
	}
	return d, nil
}

// DiskByNumber returns the device with the device number major:minor
// among parsed diskstats. /proc/diskstats is not namespaced: inside a
// container whose /sys/dev/block is not the host's (podman masks it), it
// still names the host's devices by number.
func DiskByNumber(all map[string]DiskStats, major, minor uint32) (DiskStats, bool) {
	for _, d := range all {
		if d.Major == major && d.Minor == minor {
			return d, true
		}
	}
	return DiskStats{}, false
}

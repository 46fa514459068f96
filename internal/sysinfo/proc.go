package sysinfo

import (
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
)

// parseMemTotal returns the MemTotal line of /proc/meminfo in bytes. The
// kernel writes the value in kibibytes with a "kB" suffix.
func parseMemTotal(data []byte) (uint64, error) {
	for line := range strings.Lines(string(data)) {
		key, value, ok := strings.Cut(line, ":")
		if !ok || strings.TrimSpace(key) != "MemTotal" {
			continue
		}
		fields := strings.Fields(value)
		if len(fields) == 0 {
			return 0, errors.New("MemTotal line has no value")
		}
		n, err := strconv.ParseUint(fields[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("MemTotal: %w", err)
		}
		switch {
		case len(fields) == 1:
			return n, nil
		case len(fields) == 2 && fields[1] == "kB":
			if n > math.MaxUint64/1024 {
				return 0, fmt.Errorf("MemTotal %d kB overflows a byte count", n)
			}
			return n * 1024, nil
		default:
			return 0, fmt.Errorf("MemTotal has unexpected unit in %q", strings.TrimSpace(value))
		}
	}
	return 0, errors.New("no MemTotal line")
}

// cpuModelKeys are the /proc/cpuinfo keys that name the CPU, best first:
// x86 has "model name"; some ARM, MIPS and POWER kernels only have one of
// the others.
var cpuModelKeys = []string{"model name", "Processor", "cpu model", "cpu"}

// parseCPUModel returns the first CPU model named in /proc/cpuinfo, or false
// when no line carries one.
func parseCPUModel(data []byte) (string, bool) {
	found := make(map[string]string, len(cpuModelKeys))
	for line := range strings.Lines(string(data)) {
		key, value, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		key, value = strings.TrimSpace(key), strings.TrimSpace(value)
		if _, seen := found[key]; !seen && value != "" {
			found[key] = value
		}
		if key == cpuModelKeys[0] && value != "" {
			break
		}
	}
	for _, k := range cpuModelKeys {
		if v, ok := found[k]; ok {
			return v, true
		}
	}
	return "", false
}

// readTrimmed reads a one-value /proc or /sys file such as
// /proc/sys/kernel/osrelease and strips the trailing newline.
func readTrimmed(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}

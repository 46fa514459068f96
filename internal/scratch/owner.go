package scratch

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"
)

// procRoot is where process facts are read from.
const procRoot = "/proc"

func selfMarker() (Marker, error) {
	pid := os.Getpid()
	start, err := startTicks(pid)
	if err != nil {
		return Marker{}, err
	}
	return Marker{Tool: toolName, PID: pid, StartTicks: start, BootID: bootID(), Created: time.Now().UTC()}, nil
}

func bootID() string {
	b, err := os.ReadFile(procRoot + "/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return string(bytes.TrimSpace(b))
}

func startTicks(pid int) (uint64, error) {
	b, err := os.ReadFile(fmt.Sprintf("%s/%d/stat", procRoot, pid))
	if err != nil {
		return 0, err
	}
	return ParseStatStartTime(b)
}

// alive reports whether the process that wrote m still runs: same boot, the
// PID exists, and it started at the same moment (so a reused PID does not
// count).
func alive(m Marker) bool {
	if m.BootID != "" && m.BootID != bootID() {
		return false
	}
	start, err := startTicks(m.PID)
	return err == nil && start == m.StartTicks
}

// ParseStatStartTime returns field 22 (starttime, in clock ticks since boot)
// of a /proc/PID/stat line. The command name (field 2) may contain spaces
// and parentheses, so fields are counted after its last ')'.
func ParseStatStartTime(b []byte) (uint64, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, errors.New("scratch: malformed /proc stat line: no ')'")
	}
	fields := bytes.Fields(b[i+1:])
	const idx = 22 - 3 // fields after ')' start at field 3
	if len(fields) <= idx {
		return 0, fmt.Errorf("scratch: malformed /proc stat line: %d fields after the command name", len(fields))
	}
	v, err := strconv.ParseUint(string(fields[idx]), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("scratch: malformed start time %q: %w", fields[idx], err)
	}
	return v, nil
}

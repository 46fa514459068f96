package scratch

import (
	"bytes"
	"fmt"
	"os"
	"time"

	"etcdbench/internal/sysinfo"
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
	st, err := sysinfo.ParseProcStat(b)
	return st.StartTicks, err
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

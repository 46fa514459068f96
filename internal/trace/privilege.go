package trace

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// ErrSeccomp wraps ErrPermission when bpf() was refused although this
// process holds the capability it needs: a seccomp filter refused the
// call, as the container runtimes' default profile (containers/common's,
// used by podman and CRI-O) does for bpf and perf_event_open without
// CAP_SYS_ADMIN.
var ErrSeccomp = fmt.Errorf("%w: a seccomp filter refuses bpf()", ErrPermission)

// seccompFix is what to do about ErrSeccomp.
const seccompFix = "run it with a seccomp profile that allows bpf and perf_event_open: " +
	"in Kubernetes the Localhost profile deploy/kubernetes/exporter/etcdbench-exporter-seccomp.json " +
	"installed in the kubelet's seccomp directory, with podman or docker --security-opt seccomp=<that file>, " +
	"or seccomp Unconfined (docs/exporter.md, \"Seccomp\")"

// procStatus is what permissionError needs of /proc/self/status.
type procStatus struct {
	capEff  uint64
	seccomp int // 0 none, 1 strict, 2 filter
	// hasCaps and hasSeccomp say that the lines were there.
	hasCaps, hasSeccomp bool
}

// parseStatus reads the CapEff and Seccomp lines of a /proc/PID/status
// (proc(5)): the effective capabilities as a hexadecimal mask, and the
// seccomp mode. Other lines are ignored; a malformed CapEff or Seccomp
// line is an error.
func parseStatus(data []byte) (procStatus, error) {
	var s procStatus
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		key, val, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		val = strings.TrimSpace(val)
		switch key {
		case "CapEff":
			v, err := strconv.ParseUint(val, 16, 64)
			if err != nil {
				return procStatus{}, fmt.Errorf("/proc status line CapEff %q: %w", val, err)
			}
			s.capEff, s.hasCaps = v, true
		case "Seccomp":
			v, err := strconv.Atoi(val)
			if err != nil || v < 0 || v > 2 {
				return procStatus{}, fmt.Errorf("/proc status line Seccomp %q: want 0, 1 or 2", val)
			}
			s.seccomp, s.hasSeccomp = v, true
		}
	}
	if err := sc.Err(); err != nil {
		return procStatus{}, fmt.Errorf("reading /proc status: %w", err)
	}
	return s, nil
}

// hasCap says whether capability c (unix.CAP_*) is in the effective set.
func (s procStatus) hasCap(c int) bool { return c >= 0 && c < 64 && s.capEff&(1<<uint(c)) != 0 }

// permissionError names what refused the BPF program. EPERM from bpf()
// while CAP_BPF or CAP_SYS_ADMIN is effective, under a seccomp filter,
// is the filter's doing: cilium/ebpf's own hint ("MEMLOCK may be too
// low") would send the reader the wrong way, so the message names
// seccomp and the fix instead. Without that evidence it is the missing
// privilege.
func permissionError(err error, st procStatus) error {
	if errors.Is(err, unix.EPERM) && st.hasCaps && st.hasSeccomp && st.seccomp == 2 &&
		(st.hasCap(unix.CAP_BPF) || st.hasCap(unix.CAP_SYS_ADMIN)) {
		held := "CAP_BPF"
		if !st.hasCap(unix.CAP_BPF) {
			held = "CAP_SYS_ADMIN"
		}
		return fmt.Errorf("%w (EPERM although this process holds %s; the container runtimes' default profile allows bpf and perf_event_open only with CAP_SYS_ADMIN): %s", ErrSeccomp, held, seccompFix)
	}
	return fmt.Errorf("%w (%v): run as root, or with CAP_BPF and CAP_PERFMON", ErrPermission, err)
}

// selfStatus reads this process's status; on error the zero value,
// which names no capability and no filter.
func selfStatus() procStatus {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return procStatus{}
	}
	st, _ := parseStatus(b) // a status we cannot read is no evidence of seccomp
	return st
}

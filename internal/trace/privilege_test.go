package trace

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// statusOf is a /proc/PID/status with the given CapEff and Seccomp lines.
func statusOf(capEff, seccomp string) string {
	return "Name:\tetcdbench\nUmask:\t0022\nState:\tR (running)\nCapInh:\t0000000000000000\nCapPrm:\t" + capEff +
		"\nCapEff:\t" + capEff + "\nCapBnd:\t" + capEff + "\nNoNewPrivs:\t1\nSeccomp:\t" + seccomp + "\nSeccomp_filters:\t1\n"
}

// The effective sets of the exporter's container (BPF, PERFMON,
// SYS_PTRACE, SYS_RESOURCE), of one with nothing, and of one with
// CAP_SYS_ADMIN only.
const (
	capsExporter = "000000c001080000"
	capsNone     = "0000000000000000"
	capsSysAdmin = "0000000000200000"
)

func TestParseStatus(t *testing.T) {
	st, err := parseStatus([]byte(statusOf(capsExporter, "2")))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []int{unix.CAP_BPF, unix.CAP_PERFMON, unix.CAP_SYS_PTRACE, unix.CAP_SYS_RESOURCE} {
		if !st.hasCap(c) {
			t.Errorf("capability %d not found in CapEff %s", c, capsExporter)
		}
	}
	if st.hasCap(unix.CAP_SYS_ADMIN) || st.seccomp != 2 || !st.hasSeccomp || !st.hasCaps {
		t.Errorf("parsed %+v", st)
	}
	for _, bad := range []string{statusOf("xyz", "0"), statusOf(capsNone, "3"), statusOf(capsNone, "filter")} {
		if _, err := parseStatus([]byte(bad)); err == nil {
			t.Errorf("no error for %q", bad)
		}
	}
	// This process's own status parses, with both lines.
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skip(err)
	}
	if st, err := parseStatus(b); err != nil || !st.hasCaps || !st.hasSeccomp {
		t.Errorf("/proc/self/status: %+v, %v", st, err)
	}
}

// TestPermissionError: EPERM with CAP_BPF (or CAP_SYS_ADMIN) held under a
// seccomp filter names seccomp and its fix, never cilium/ebpf's MEMLOCK
// hint; without the capability, or without a filter (a kernel before 5.11
// counting maps against RLIMIT_MEMLOCK also says EPERM), it is the missing
// privilege.
func TestPermissionError(t *testing.T) {
	// What cilium/ebpf returns when bpf(BPF_MAP_CREATE) fails with EPERM.
	ciliumEPERM := fmt.Errorf("field EnterClose: program enter_close: map .rodata: map create: %w (MEMLOCK may be too low, consider rlimit.RemoveMemlock)", unix.EPERM)
	tests := []struct {
		name     string
		err      error
		status   string
		seccomp  bool
		mentions string
	}{
		{"CAP_BPF under a filter", ciliumEPERM, statusOf(capsExporter, "2"), true, "holds CAP_BPF"},
		{"CAP_SYS_ADMIN under a filter", ciliumEPERM, statusOf(capsSysAdmin, "2"), true, "holds CAP_SYS_ADMIN"},
		{"no capability under a filter", ciliumEPERM, statusOf(capsNone, "2"), false, "CAP_BPF and CAP_PERFMON"},
		{"CAP_BPF, no filter", ciliumEPERM, statusOf(capsExporter, "0"), false, "CAP_BPF and CAP_PERFMON"},
		{"EACCES is the verifier or an LSM", fmt.Errorf("load: %w", unix.EACCES), statusOf(capsExporter, "2"), false, "CAP_BPF and CAP_PERFMON"},
		{"status unreadable", ciliumEPERM, "", false, "CAP_BPF and CAP_PERFMON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, err := parseStatus([]byte(tt.status))
			if err != nil {
				t.Fatal(err)
			}
			got := permissionError(tt.err, st)
			if !errors.Is(got, ErrPermission) {
				t.Errorf("%v does not wrap ErrPermission", got)
			}
			if errors.Is(got, ErrSeccomp) != tt.seccomp {
				t.Errorf("errors.Is(ErrSeccomp) = %v, want %v: %v", !tt.seccomp, tt.seccomp, got)
			}
			msg := got.Error()
			if !strings.Contains(msg, tt.mentions) {
				t.Errorf("%q does not mention %q", msg, tt.mentions)
			}
			if tt.seccomp && (strings.Contains(msg, "MEMLOCK") || !strings.Contains(msg, "etcdbench-exporter-seccomp.json") || !strings.Contains(msg, "Unconfined")) {
				t.Errorf("%q: want seccomp's fix (the shipped profile, Unconfined) and no MEMLOCK hint", msg)
			}
		})
	}
}

func FuzzParseStatus(f *testing.F) {
	f.Add([]byte(statusOf(capsExporter, "2")))
	f.Add([]byte("CapEff:\t\nSeccomp:"))
	f.Add([]byte("CapEff: ffffffffffffffffff\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		st, err := parseStatus(b)
		if err != nil {
			return
		}
		if st.seccomp < 0 || st.seccomp > 2 {
			t.Errorf("seccomp mode %d accepted", st.seccomp)
		}
		_ = permissionError(unix.EPERM, st) // any status gives a message without panicking
	})
}

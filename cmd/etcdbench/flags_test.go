package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"etcdbench/internal/run"
)

// TestOnlyEtcd: etcdproc's errors name no flag; each command adds its
// own, so trace (no --data-dir) never tells users to give --data-dir.
func TestOnlyEtcd(t *testing.T) {
	root := t.TempDir()
	proc := func(pid string) {
		d := filepath.Join(root, pid)
		if err := os.MkdirAll(filepath.Join(d, "fd"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "comm"), []byte("etcd\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "cmdline"), []byte("/usr/bin/etcd\x00"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	const traceNone, walNone = "--pid PID", "--pid PID, or --data-dir DIR to read a stopped etcd's WAL"
	_, err := onlyEtcd(root, traceNone)
	if !run.IsUsage(err) || !strings.HasSuffix(err.Error(), "; give --pid PID") || strings.Contains(err.Error(), "--data-dir") {
		t.Errorf("trace, no etcd: %v; want a usage error that names --pid, not --data-dir", err)
	}
	if _, err := onlyEtcd(root, walNone); !run.IsUsage(err) || !strings.Contains(err.Error(), "no etcd process found in "+root+"; give --pid PID, or --data-dir DIR") {
		t.Errorf("diagnose wal, no etcd: %v; want a usage error that names --pid and --data-dir", err)
	}
	proc("10")
	if pid, err := onlyEtcd(root, traceNone); err != nil || pid != 10 {
		t.Errorf("one etcd: pid %d, %v; want 10", pid, err)
	}
	proc("20")
	if _, err := onlyEtcd(root, traceNone); !run.IsUsage(err) || !strings.HasPrefix(err.Error(), "2 etcd processes: 10 (/usr/bin/etcd); 20 (/usr/bin/etcd); choose one with --pid") {
		t.Errorf("two etcds: %v; want a usage error listing both and naming --pid", err)
	}
}

package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"etcdbench/internal/check"
	"etcdbench/internal/result"
	"etcdbench/internal/testutil"
	"etcdbench/internal/testutil/fusedelay"
	"etcdbench/internal/verdict"
)

// checkResult runs a quick check with args and returns its result.
func checkResult(t *testing.T, o runOpts, args ...string) (*result.Result, runResult) {
	t.Helper()
	res := runBin(t, o, append([]string{"--quick", "--no-progress", "-o", "json"}, args...)...)
	if res.code != exitOK && res.code != exitFail {
		t.Fatalf("exit %d, want 0 or 1; stderr:\n%s", res.code, res.stderr)
	}
	r, err := result.Read(strings.NewReader(res.stdout))
	if err != nil {
		t.Fatalf("stdout is not a result: %v\n%s", err, res.stdout)
	}
	return r, res
}

func workloadNames(r *result.Result) []string {
	var names []string
	for _, w := range r.Workloads {
		names = append(names, w.Name)
	}
	return names
}

func summary(t *testing.T, r *result.Result) *result.Workload {
	t.Helper()
	w := &r.Workloads[len(r.Workloads)-1]
	if w.Name != "check" {
		t.Fatalf("last workload %q, want the check's summary; workloads %v", w.Name, workloadNames(r))
	}
	return w
}

// TestCheckQuick runs etcdbench without a command (the check) in a
// directory: the disk workloads, the embedded etcd's loads and the
// summary, one status, no scratch left; then re-renders the JSON as text.
func TestCheckQuick(t *testing.T) {
	d := t.TempDir()
	before := snapshot(t, d)
	r, res := checkResult(t, runOpts{dir: d})
	if got := strings.Join(workloadNames(r), ","); got != "wal,wal-under-load,etcd-put,etcd-range,cpu-capacity,check" {
		t.Errorf("workloads %s", got)
	}
	// The quick budget's estimate: capacity's etcd side on its embedded
	// etcd, no disk model, judged once as capacity_min on the side and
	// stated first in the summary.
	side := r.Workloads[4]
	if c := side.Capacity; c == nil || c.Etcd == nil || !c.Etcd.WithoutDiskModel || c.Etcd.Rate != c.Rate || len(c.Steps) == 0 {
		t.Errorf("cpu-capacity: capacity %+v, want the side's own estimate", c)
	} else if v := side.Verdicts; len(v) != 1 || v[0].Check != verdict.Defaults().CapacityMin.ID || v[0].Value != c.Etcd.Rate {
		t.Errorf("cpu-capacity verdicts %+v, want capacity_min of %v alone", v, c.Etcd.Rate)
	}
	if r.Status == nil || (*r.Status == verdict.Fail) != (res.code == exitFail) {
		t.Errorf("status %v does not match exit %d", r.Status, res.code)
	}
	s := summary(t, r)
	for _, f := range []string{"disk_wal_p99", "disk_wal_under_load_p99", "etcd_wal_fdatasync_p99", "ratio_etcd_to_disk_wal"} {
		if s.Figure(f) == nil {
			t.Errorf("summary lacks %s: %+v", f, s.Figures)
		}
	}
	if notes := strings.Join(s.Notes, "\n"); !strings.Contains(notes, "finding") || !strings.HasPrefix(notes, "capacity: etcd on this disk and machine: ") || !strings.Contains(notes, "the disk's model did not run") {
		t.Errorf("summary notes: want the estimate first (no disk model), then the findings:\n%s", notes)
	}
	if f, c := s.Figure("etcd_capacity"), side.Capacity; f == nil || c == nil || c.Etcd == nil || f.Value != c.Etcd.Rate {
		t.Errorf("summary figure etcd_capacity %+v, want the side's estimate", f)
	}
	put := r.Workloads[2]
	if put.Figure("member0_wal_fsyncs") == nil || put.Ops == 0 {
		t.Errorf("etcd-put: %d ops, figures %+v", put.Ops, put.Figures)
	}
	// Traced (root, BPF allowed): also without the waits for a CPU, and
	// the summary compares that with the disk test.
	if put.Latency(check.TracedLatency) != nil {
		if put.Latency(check.TracedDiskLatency) == nil || s.Figure("ratio_etcd_without_cpu_wait_to_disk_test") == nil {
			t.Errorf("traced put without %s or its ratio: latencies %v, summary figures %+v", check.TracedDiskLatency, put.Latencies, s.Figures)
		}
	}
	checkSnapshot(t, d, before)

	// The saved result renders as the text report, table and findings.
	f := filepath.Join(t.TempDir(), "check.json")
	if err := os.WriteFile(f, []byte(res.stdout), 0o644); err != nil {
		t.Fatal(err)
	}
	text := runBin(t, runOpts{}, "report", f)
	for _, want := range []string{"verdicts\n", "finding", "check: the answer", "Result: "} {
		if !strings.Contains(text.stdout, want) {
			t.Errorf("text report lacks %q:\n%s", want, text.stdout)
		}
	}
}

// TestCheckSlowDisk runs the check on a filesystem whose fsync and
// fdatasync wait 15 ms: it fails and names the disk; the same filesystem
// without the delay passes. The filesystems pass through to memory
// (/dev/shm) where there is one, so that the only slow syncs are the
// injected ones: on this shared disk, with the other tests' I/O, etcd's
// own p99 reached 10.6 ms once. The two checks run side by side: the
// slow one spends its time waiting on its syncs.
func TestCheckSlowDisk(t *testing.T) {
	t.Run("15 ms syncs", func(t *testing.T) {
		t.Parallel()
		// Every sync over the 10 ms limit, and fast enough that the
		// WAL's minimum samples come in half the time 30 ms would take.
		fs := fusedelay.Mount(t, memBacking(t), 15*time.Millisecond)
		// Without the etcd side (TestCheckQuick runs it): its descent on
		// syncs that fail every rate would double the check's time.
		r, res := checkResult(t, runOpts{}, "--dir", fs.Dir, "--cpu=false")
		if res.code != exitFail {
			t.Errorf("exit %d with 15 ms syncs, want %d", res.code, exitFail)
		}
		notes := strings.Join(summary(t, r).Notes, "\n")
		if !strings.Contains(notes, "finding 1 (FAIL): slow disk") {
			t.Errorf("the slow disk is not the first finding:\n%s", notes)
		}
		if fs.Syncs() == 0 {
			t.Error("no sync went through the delaying filesystem")
		}
	})
	t.Run("no delay", func(t *testing.T) {
		t.Parallel()
		fs := fusedelay.Mount(t, memBacking(t), 0)
		r, res := checkResult(t, runOpts{}, "--dir", fs.Dir, "--cpu=false")
		if res.code != exitOK {
			var failed []string
			for _, w := range r.Workloads {
				for _, v := range w.Verdicts {
					if v.Status == verdict.Fail {
						failed = append(failed, w.Name+": "+v.Title+" "+v.Detail)
					}
				}
			}
			t.Errorf("exit %d without the delay, want %d; failed:\n%s", res.code, exitOK, strings.Join(failed, "\n"))
		}
		if fs.Syncs() == 0 {
			t.Error("no sync went through the filesystem")
		}
	})
}

// TestCheckInterrupted stops a check with SIGINT while the disk workloads
// or the etcd run: exit 130, nothing left in the directory.
func TestCheckInterrupted(t *testing.T) {
	d := t.TempDir()
	before := snapshot(t, d)
	p := start(t, runOpts{}, "check", "--dir", d, "--no-progress")
	sd := waitScratch(t, p, d)
	testutil.WaitFor(t, 60*time.Second, "the check's first workload", func() bool {
		if p.exited() {
			t.Fatalf("etcdbench exited before its first workload: %+v", p.res)
		}
		ents, _ := os.ReadDir(sd)
		for _, e := range ents {
			if e.IsDir() {
				return true
			}
		}
		return false
	})
	p.signal(t, syscall.SIGINT)
	res := p.wait(t)
	if res.code != exitInterrupted {
		t.Errorf("exit %d, want %d; stderr:\n%s", res.code, exitInterrupted, res.stderr)
	}
	checkOneErrorLine(t, res.stderr)
	checkSnapshot(t, d, before)
}

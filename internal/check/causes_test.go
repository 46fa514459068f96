package check

import (
	"strings"
	"testing"

	"etcdbench/internal/result"
	"etcdbench/internal/verdict"
)

// TestFindingsPutDurabilityFirst: a disk that is fast because a mount
// option disables flushes must be answered with that, before a slow
// backend commit or a low bandwidth, whatever order the workloads ran in.
func TestFindingsPutDurabilityFirst(t *testing.T) {
	ws := []result.Workload{
		{Name: "backend", Verdicts: []verdict.Verdict{{Check: "backend_commit_p99", Title: "backend commit p99", Status: verdict.Fail, Value: 0.03, Unit: "s", Limit: 0.025, Comparison: "<"}}},
		{Name: "wal", Verdicts: []verdict.Verdict{
			{Check: "wal_fsync_p99", Title: "WAL fdatasync p99", Status: verdict.Pass, Value: 0.000168, Unit: "s", Limit: 0.01, Comparison: "<"},
			{Check: verdict.CheckMountFlushDisabled, Title: "fdatasync flushes the disk cache", Status: verdict.Fail, Value: 1, Unit: "count", Limit: 0, Comparison: "<="},
			{Check: "sync_implausibly_fast", Title: "fdatasync reaches stable storage", Status: verdict.Fail, Value: 88e-6, Unit: "s", Limit: 10e-6, Comparison: ">="},
			{Check: verdict.CheckContainerLayer, Title: "data outside the container's writable layer", Status: verdict.Warn, Value: 1, Unit: "count", Comparison: "<="},
		}},
	}
	fs := Findings(ws)
	if len(fs) != 3 {
		t.Fatalf("%d findings, want 3: %+v", len(fs), fs)
	}
	if fs[0].Cause.Name != NotDurable.Name || fs[0].Status != verdict.Fail || len(fs[0].Evidence) != 2 {
		t.Errorf("first finding %q %s with %d pieces of evidence, want %q FAIL with the mount rule and the timing rule", fs[0].Cause.Name, fs[0].Status, len(fs[0].Evidence), NotDurable.Name)
	}
	if fs[1].Cause.Name != SlowDisk.Name || fs[2].Cause.Name != UnsuitableStorage.Name {
		t.Errorf("then %q and %q, want %q and %q", fs[1].Cause.Name, fs[2].Cause.Name, SlowDisk.Name, UnsuitableStorage.Name)
	}
	notes := Summarize(ws).Notes
	if !strings.HasPrefix(notes[0], "finding 1 (FAIL): fast because writes are not made durable") {
		t.Errorf("first note %q", notes[0])
	}
}

package check

import (
	"strings"
	"testing"

	"etcdbench/internal/finding"
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
	if fs[0].Kind != finding.NotDurable || fs[0].Status != verdict.Fail || len(fs[0].Facts) != 2 || len(fs[0].Evidence) != 2 {
		t.Errorf("first finding %q %s with facts %+v, want %q FAIL with the mount rule and the timing rule", fs[0].Kind, fs[0].Status, fs[0].Facts, finding.NotDurable)
	}
	if f, ok := fs[0].Fact("wal: sync_implausibly_fast"); !ok || f.Value != 88e-6 || f.Limit != 10e-6 {
		t.Errorf("the timing rule's fact %+v (present %v)", f, ok)
	}
	if fs[1].Kind != finding.Disk || fs[2].Kind != finding.Unsuitable {
		t.Errorf("then %q and %q, want %q and %q", fs[1].Kind, fs[2].Kind, finding.Disk, finding.Unsuitable)
	}
	notes := Summarize(ws, Measured{}, false).Notes
	if !strings.HasPrefix(notes[0], "finding 1 (FAIL): fast because writes are not made durable") {
		t.Errorf("first note %q", notes[0])
	}
}

package report

import (
	"bytes"
	"strings"
	"testing"

	"etcdbench/internal/result"
	"etcdbench/internal/verdict"
)

// A disk sweep's device cost and budgets reach the text and HTML reports,
// and a volume found under a cap is named with what each load needs.
func TestCapacityBudgetsReported(t *testing.T) {
	yes, no := true, false
	c := &result.Capacity{
		Rate: 300, Upper: 600, Unit: "writes/s", Bend: "rate-cap", Evidence: "flat", Confidence: 0.95, StepConfidence: 0.99, Decided: true,
		Steps: []result.CapacityStep{
			{Phase: "ladder", Rate: 300, Status: verdict.Pass, Decided: true, EntriesPerSync: 1, MaxBatch: 200, BackendCommits: 90, BackendCommitP99Ns: 9e6,
				Device: &result.StepDevice{WriteIOPS: 1000, WriteBytesPerSec: 3.6e6, FlushesPerSec: 300, WritesPerEntry: 3.33, BytesPerEntry: 12000, FlushesPerEntry: 1}},
			{Phase: "ladder", Rate: 600, Status: verdict.Fail, Decided: true, EntriesPerSync: 3, MaxBatch: 200, HeldFromNs: 3e9,
				Device: &result.StepDevice{WriteIOPS: 1000, WriteBytesPerSec: 4e6, WritesPerEntry: 1.66, BytesPerEntry: 6600}},
		},
		Budgets: []result.CapacityBudget{
			{Name: "s", Rate: 150, Kind: "check-perf", WriteIOPS: 500, WriteBytesPerSec: 1.8e6, FlushesPerSec: 150, SyncP99Ns: 10e6, CommitP99Ns: 25e6, CostFrom: 300, Fits: &yes},
			{Name: "m", Rate: 1000, Kind: "check-perf", WriteIOPS: 3330, WriteBytesPerSec: 12e6, FlushesPerSec: 1000, SyncP99Ns: 10e6, CommitP99Ns: 25e6, CostFrom: 300, Fits: &no},
		},
		Volume: &result.CapacityVolume{WriteIOPS: 1000, WriteBytesPerSec: 4e6, Evidence: "the device's writes stayed at 1000"},
	}
	if got, want := VolumeSummary(c), "this volume gives about 1000 write IOPS"; !strings.HasPrefix(got, want) || !strings.Contains(got, "load s needs about 500, m about 3330") {
		t.Errorf("VolumeSummary = %q", got)
	}
	var b bytes.Buffer
	ew := &errWriter{w: &b}
	textCapacity(ew, c)
	out := b.String()
	for _, want := range []string{"device cost at each step", "3.33", "the volume each load needs", "check perf m", "too few IOPS", "300/s (upper bound)", "9ms", "FAIL (held: its 3s step's p99 came from too few observations)"} {
		if !strings.Contains(out, want) {
			t.Errorf("text report lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "(timed)") {
		t.Errorf("no step's backend p99 was timed, yet the report says so:\n%s", out)
	}
	c.Steps[0].BackendCommitTimed = true
	b.Reset()
	textCapacity(ew, c)
	if out := b.String(); !strings.Contains(out, "9ms (timed)") || !strings.Contains(out, "not etcd's own histogram") {
		t.Errorf("a timed backend p99 is not marked, nor its note given:\n%s", out)
	}
	tables := capacityTables(c)
	if len(tables) != 2 || len(tables[0].Rows) != 2 || len(tables[1].Rows) != 2 {
		t.Fatalf("tables %+v", tables)
	}
}

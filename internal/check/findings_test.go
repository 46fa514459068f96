package check

import (
	"slices"
	"strings"
	"testing"

	"etcdbench/internal/finding"
	"etcdbench/internal/result"
	"etcdbench/internal/verdict"
)

func v(check string, s verdict.Status, value, limit float64, unit string) verdict.Verdict {
	return verdict.Verdict{Check: check, Title: check, Status: s, Value: value, Limit: limit, Unit: unit, Comparison: "<="}
}

func TestFindings(t *testing.T) {
	for _, tc := range []struct {
		name string
		ws   []result.Workload
		want []finding.Kind // kinds, in order
		// evidence is a substring of the first finding's first evidence.
		evidence string
	}{
		{"nothing wrong", []result.Workload{{Name: "wal", Verdicts: []verdict.Verdict{v("wal_fsync_p99", verdict.Pass, 0.001, 0.01, "s")}}}, nil, ""},
		{"a slow WAL", []result.Workload{{Name: "wal", Verdicts: []verdict.Verdict{v("wal_fsync_p99", verdict.Fail, 0.0234, 0.01, "s")}}},
			[]finding.Kind{finding.Disk}, "wal: FAIL wal_fsync_p99 23.4ms (limit <= 10ms)"},
		{"the WAL under load's check is the disk's", []result.Workload{{Name: "x", Verdicts: []verdict.Verdict{v(verdict.CheckWALFsyncUnderLoad, verdict.Warn, 9, 10, "ms")}}},
			[]finding.Kind{finding.Disk}, "9 ms"},
		{"FAIL before WARN whatever the rank", []result.Workload{
			{Name: "wal", Verdicts: []verdict.Verdict{v("wal_fsync_p99", verdict.Warn, 0.009, 0.01, "s")}},
			{Name: "etcd-put", Verdicts: []verdict.Verdict{v("leader_changes", verdict.Fail, 2, 0, "count")}},
		}, []finding.Kind{finding.Member, finding.Disk}, "etcd-put: FAIL leader_changes 2 (limit <= 0)"},
		{"same status: by rank", []result.Workload{
			{Name: "recovery", Verdicts: []verdict.Verdict{v("recovery_bandwidth", verdict.Fail, 10, 100, "MB/s")}},
			{Name: "wal", Verdicts: []verdict.Verdict{v("rotational_sync_fast", verdict.Fail, 1e-5, 1e-3, "s")}},
			{Name: "backend", Verdicts: []verdict.Verdict{v("backend_commit_p99", verdict.Fail, 0.04, 0.025, "s")}},
		}, []finding.Kind{finding.Disk, finding.FakeSync, finding.SlowRecovery}, "backend: FAIL"},
		{"verdicts of one cause are one finding", []result.Workload{
			{Name: "wal", Verdicts: []verdict.Verdict{v("wal_fsync_p99", verdict.Warn, 0.009, 0.01, "s"), v("sync_iops_min", verdict.Fail, 20, 50, "IOPS")}},
		}, []finding.Kind{finding.Disk}, "wal: WARN"},
		{"a check of no known cause keeps its title", []result.Workload{{Name: "w", Verdicts: []verdict.Verdict{v("new_rule", verdict.Fail, 1, 0, "count")}}},
			[]finding.Kind{finding.Unknown}, "new_rule"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := Findings(tc.ws)
			var got []finding.Kind
			for _, f := range fs {
				got = append(got, f.Kind)
				if len(f.Facts) != len(f.Evidence) || f.Name() == "" || f.Advice() == "" {
					t.Errorf("finding %+v: a fact and evidence per verdict, a name and advice", f)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("kinds %q, want %q", got, tc.want)
			}
			if tc.evidence != "" && !strings.Contains(fs[0].Evidence[0], tc.evidence) {
				t.Errorf("first evidence %q lacks %q", fs[0].Evidence[0], tc.evidence)
			}
		})
	}
}

func TestFindingTakesWorstStatus(t *testing.T) {
	fs := Findings([]result.Workload{{Name: "wal", Verdicts: []verdict.Verdict{
		v("wal_fsync_p99", verdict.Warn, 0.009, 0.01, "s"), v("sync_iops_min", verdict.Fail, 20, 50, "IOPS"),
	}}})
	if len(fs) != 1 || fs[0].Status != verdict.Fail || len(fs[0].Evidence) != 2 {
		t.Fatalf("findings %+v: want one FAIL finding with two pieces of evidence", fs)
	}
}

// TestEveryCauseHasAdvice keeps the kinds' data complete: a finding
// without what to do is half an answer.
func TestEveryCauseHasAdvice(t *testing.T) {
	for check, k := range kindOf {
		if i := k.Info(); !k.Known() || i.Name == "" || i.Advice == "" || i.Rank < 0 {
			t.Errorf("check %s: kind %+v lacks a name, advice or rank", check, i)
		}
	}
}

// TestDurabilityFailureFirst: storage that is fast because it does not
// make writes durable tops the answer, above a slow disk's FAIL.
func TestDurabilityFailureFirst(t *testing.T) {
	fs := Findings([]result.Workload{
		{Name: "backend", Verdicts: []verdict.Verdict{v("backend_commit_p99", verdict.Fail, 0.04, 0.025, "s")}},
		{Name: "wal", Verdicts: []verdict.Verdict{v(verdict.CheckMountFlushDisabled, verdict.Fail, 1, 0, "count")}},
	})
	if len(fs) != 2 || fs[0].Kind != finding.NotDurable {
		t.Fatalf("findings %+v: want the durability FAIL first", fs)
	}
}

package check

import (
	"slices"
	"strings"
	"testing"
	"time"

	"etcdbench/internal/disk"
	"etcdbench/internal/finding"
	"etcdbench/internal/result"
	"etcdbench/internal/verdict"
)

func v(check string, s verdict.Status, value, limit float64, unit string) verdict.Verdict {
	return verdict.Verdict{Check: check, Title: check, Status: s, Value: value, Limit: limit, Unit: unit, Comparison: "<="}
}

// capacityAt is a capacity workload whose estimate, 25 puts/s, failed
// capacity_min, limited by lim.
func capacityAt(lim finding.Kind) result.Workload {
	th := verdict.Defaults()
	return result.Workload{Name: "capacity", Verdicts: []verdict.Verdict{v(th.CapacityMin.ID, verdict.Fail, 25, 150, "ops/s")},
		Capacity: &result.Capacity{Rate: 7600, Etcd: &result.CapacityEstimate{Rate: 25, LimitedBy: lim}}}
}

func TestFindings(t *testing.T) {
	for _, tc := range []struct {
		name string
		ws   []result.Workload
		want []finding.Kind // kinds, in order
		// fact is the first finding's first fact (none: not checked).
		fact finding.Fact
	}{
		{"nothing wrong", []result.Workload{{Name: "wal", Verdicts: []verdict.Verdict{v("wal_fsync_p99", verdict.Pass, 0.001, 0.01, "s")}}}, nil, finding.Fact{}},
		{"a slow WAL", []result.Workload{{Name: "wal", Verdicts: []verdict.Verdict{v("wal_fsync_p99", verdict.Fail, 0.0234, 0.01, "s")}}},
			[]finding.Kind{finding.Disk}, finding.Fact{Name: "wal: wal_fsync_p99", Value: 0.0234, Unit: "s", Limit: 0.01}},
		{"the WAL under load's check is the disk's", []result.Workload{{Name: "x", Verdicts: []verdict.Verdict{v(verdict.CheckWALFsyncUnderLoad, verdict.Warn, 9, 10, "ms")}}},
			[]finding.Kind{finding.Disk}, finding.Fact{Name: "x: " + verdict.CheckWALFsyncUnderLoad, Value: 9, Unit: "ms", Limit: 10}},
		{"FAIL before WARN whatever the rank", []result.Workload{
			{Name: "wal", Verdicts: []verdict.Verdict{v("wal_fsync_p99", verdict.Warn, 0.009, 0.01, "s")}},
			{Name: "etcd-put", Verdicts: []verdict.Verdict{v("leader_changes", verdict.Fail, 2, 0, "count")}},
		}, []finding.Kind{finding.Member, finding.Disk}, finding.Fact{Name: "etcd-put: leader_changes", Value: 2, Unit: "count"}},
		{"same status: by rank", []result.Workload{
			{Name: "recovery", Verdicts: []verdict.Verdict{v("recovery_bandwidth", verdict.Fail, 10, 100, "MB/s")}},
			{Name: "wal", Verdicts: []verdict.Verdict{v("rotational_sync_fast", verdict.Fail, 1e-5, 1e-3, "s")}},
			{Name: "backend", Verdicts: []verdict.Verdict{v("backend_commit_p99", verdict.Fail, 0.04, 0.025, "s")}},
		}, []finding.Kind{finding.Disk, finding.FakeSync, finding.SlowRecovery}, finding.Fact{Name: "backend: backend_commit_p99", Value: 0.04, Unit: "s", Limit: 0.025}},
		{"verdicts of one cause are one finding", []result.Workload{
			{Name: "wal", Verdicts: []verdict.Verdict{v("wal_fsync_p99", verdict.Warn, 0.009, 0.01, "s"), v("sync_iops_min", verdict.Fail, 20, 50, "IOPS")}},
		}, []finding.Kind{finding.Disk}, finding.Fact{Name: "wal: wal_fsync_p99", Value: 0.009, Unit: "s", Limit: 0.01}},
		// The estimate judged by capacity_min: an etcd side that gave out
		// on its CPUs (the syncs slow only with their waits for a CPU) is
		// a CPU finding, whose advice names cores and priority, not a
		// faster disk; limited by the disk it stays the disk's.
		{"capacity limited by the CPU", []result.Workload{capacityAt(finding.CPU)}, []finding.Kind{finding.CPU},
			finding.Fact{Name: "capacity: capacity_min", Value: 25, Unit: "ops/s", Limit: 150}},
		{"capacity limited by the disk", []result.Workload{capacityAt(finding.Disk)}, []finding.Kind{finding.Disk},
			finding.Fact{Name: "capacity: capacity_min", Value: 25, Unit: "ops/s", Limit: 150}},
		{"capacity limited by nothing named", []result.Workload{capacityAt(finding.None)}, []finding.Kind{finding.Disk},
			finding.Fact{Name: "capacity: capacity_min", Value: 25, Unit: "ops/s", Limit: 150}},
		{"a check of no known cause keeps its title", []result.Workload{{Name: "w", Verdicts: []verdict.Verdict{v("new_rule", verdict.Fail, 1, 0, "count")}}},
			[]finding.Kind{finding.Unknown}, finding.Fact{Name: "w: new_rule", Value: 1, Unit: "count"}},
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
			if len(fs) > 0 && fs[0].Kind == finding.CPU && (!strings.Contains(fs[0].Advice(), "dedicated cores") || strings.Contains(fs[0].Advice(), "faster disk of its own")) {
				t.Errorf("CPU advice %q", fs[0].Advice())
			}
			if tc.fact != (finding.Fact{}) && fs[0].Facts[0] != tc.fact {
				t.Errorf("first fact %+v, want %+v", fs[0].Facts[0], tc.fact)
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

// TestEvidenceInWords: a finding's evidence renders each verdict as
// "workload: STATUS title value (limit)".
func TestEvidenceInWords(t *testing.T) {
	fs := Findings([]result.Workload{{Name: "wal", Verdicts: []verdict.Verdict{v("wal_fsync_p99", verdict.Fail, 0.0234, 0.01, "s")}}})
	if len(fs) != 1 || len(fs[0].Evidence) != 1 || fs[0].Evidence[0] != "wal: FAIL wal_fsync_p99 23.4ms (limit <= 10ms)" {
		t.Errorf("evidence %+v", fs)
	}
}

// The closed-loop WAL test fails on a storage that carries etcd's load
// (a 3,000-IOPS volume carries 1,320 puts/s): its FAIL counts as a WARN
// in the overall result, the answer (what the storage carries) comes
// first in the summary, and the finding says why the closed-loop
// failure matters. Below check perf's s, or without a capacity, it stays
// a FAIL.
func TestAdviseClosedLoop(t *testing.T) {
	th := verdict.Defaults()
	wls := func() []result.Workload {
		return []result.Workload{
			{Name: "wal", Verdicts: []verdict.Verdict{v(th.WALFsyncP99.ID, verdict.Fail, 0.0234, 0.01, "s")}},
			{Name: "backend", Verdicts: []verdict.Verdict{v(th.BackendCommitP99.ID, verdict.Pass, 0.005, 0.025, "s")}},
			{Name: "wal-under-load", Verdicts: []verdict.Verdict{v(verdict.CheckWALFsyncUnderLoad, verdict.Fail, 0.03, 0.01, "s")}},
		}
	}
	for _, tc := range []struct {
		name    string
		c       *result.Capacity
		overall verdict.Status
	}{
		{"carries m", &result.Capacity{Rate: 1320, Upper: 1500, Unit: "writes/s", Decided: true}, verdict.Warn},
		{"carries under s", &result.Capacity{Rate: 100, Upper: 150, Unit: "writes/s", Decided: true}, verdict.Fail},
		{"no capacity", nil, verdict.Fail},
		{"etcd carries m", &result.Capacity{Rate: 1320, Upper: 1500, Unit: "writes/s", Decided: true,
			Etcd: &result.CapacityEstimate{Rate: 1100, Upper: 1250, LimitedBy: finding.CPU}}, verdict.Warn},
		{"etcd carries under s", &result.Capacity{Rate: 1320, Upper: 1500, Unit: "writes/s", Decided: true,
			Etcd: &result.CapacityEstimate{Rate: 35, Upper: 70, LimitedBy: finding.CPU}}, verdict.Fail},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := wls()
			Advise(ws, tc.c)
			r := result.Result{Workloads: ws}
			r.Finish(time.Now())
			if *r.Status != tc.overall {
				t.Fatalf("overall %s, want %s", *r.Status, tc.overall)
			}
			for _, w := range ws {
				for _, vd := range w.Verdicts {
					if vd.Status != verdict.Pass && vd.Status != verdict.Fail {
						t.Errorf("%s: %s changed to %s: a section keeps its own verdict", w.Name, vd.Check, vd.Status)
					}
				}
			}
			sum := Summarize(ws, Measured{Disk: disk.Measured{Capacity: tc.c}}, false)
			fs := Findings(ws)
			if len(fs) != 1 || fs[0].Kind != finding.Disk || fs[0].Status != tc.overall || fs[0].Advisory != (tc.overall == verdict.Warn) {
				t.Fatalf("findings %+v", fs)
			}
			first := "disk capacity: the WAL carries"
			if tc.c != nil && tc.c.Etcd != nil {
				first = "capacity: etcd on this disk and machine: "
			}
			if tc.c != nil && !strings.HasPrefix(sum.Notes[0], first) {
				t.Errorf("first note %q, want what the storage carries", sum.Notes[0])
			}
			if got := strings.Join(sum.Notes, "\n"); (tc.overall == verdict.Warn) != strings.Contains(got, "fio's closed-loop recipe") {
				t.Errorf("notes %q", got)
			}
		})
	}
}

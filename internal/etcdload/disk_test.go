package etcdload

import (
	"context"
	"math"
	"strings"
	"testing"

	"etcdbench/internal/etcdload/metrics"
	"etcdbench/internal/etcdload/observe"
	"etcdbench/internal/verdict"
)

func TestJudgeDisk(t *testing.T) {
	tg := observe.Target{Name: "member0", About: "the embedded member"}
	cases := []struct {
		name      string
		wal, be   metrics.Histogram
		walStatus verdict.Status
		beStatus  verdict.Status
	}{
		// all under 1 ms: p99 = 0.99 ms
		{"fast", metrics.DiskHistogram(100), metrics.DiskHistogram(100), verdict.Pass, verdict.Pass},
		// p99 rank 99 of 100, 50 in (4,8] and 50 in (8,16]: 8 + 8*49/50 = 15.84 ms
		{"slow wal", metrics.DiskHistogram(0, 0, 0, 50, 50), metrics.DiskHistogram(100), verdict.Fail, verdict.Pass},
		// commits all in (8,16]: p99 = 8 + 8*0.99 = 15.92 ms, under 25 ms
		{"commit under 25 ms", metrics.DiskHistogram(100), metrics.DiskHistogram(0, 0, 0, 0, 100), verdict.Pass, verdict.Pass},
		// 100 in (16,32]: p99 = 16 + 16*0.99 = 31.84 ms
		{"slow commit", metrics.DiskHistogram(100), metrics.DiskHistogram(0, 0, 0, 0, 0, 100), verdict.Pass, verdict.Fail},
		// 99 in (4,8], 1 in (8,16]: p99 = 4 + 4*99/99 = 8 ms, within 20 % of 10 ms
		{"wal near the limit", metrics.DiskHistogram(0, 0, 0, 99, 1), metrics.DiskHistogram(100), verdict.Warn, verdict.Pass},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			vs, notes := JudgeDisk(verdict.Defaults(), []observe.Member{{Target: tg, WALFsync: tc.wal, BackendCommit: tc.be}}, 0, false)
			if len(vs) != 2 || len(notes) != 0 {
				t.Fatalf("verdicts %+v notes %v: want 2 verdicts", vs, notes)
			}
			if vs[0].Check != "wal_fsync_p99" || vs[0].Status != tc.walStatus {
				t.Errorf("WAL: %s %v (p99 %g), want %v", vs[0].Check, vs[0].Status, vs[0].Value, tc.walStatus)
			}
			if vs[1].Check != "backend_commit_p99" || vs[1].Status != tc.beStatus {
				t.Errorf("commit: %s %v (p99 %g), want %v", vs[1].Check, vs[1].Status, vs[1].Value, tc.beStatus)
			}
			for _, v := range vs {
				if v.Confidence != nil || !strings.Contains(v.Detail, "1 ms wide") {
					t.Errorf("verdict %s: confidence %v, detail %q", v.Check, v.Confidence, v.Detail)
				}
			}
		})
	}
}

func TestJudgeDiskEmpty(t *testing.T) {
	vs, notes := JudgeDisk(verdict.Defaults(), []observe.Member{{Target: observe.Target{Name: "m"}, WALFsync: metrics.DiskHistogram(), BackendCommit: metrics.DiskHistogram(100)}}, 0, false)
	if len(vs) != 1 || vs[0].Check != "backend_commit_p99" || len(notes) != 1 {
		t.Errorf("verdicts %+v, notes %v: want only the commit verdict and one note", vs, notes)
	}
	// 99 calls, one slow, are not enough evidence for a p99: the next
	// could bring it under the limit.
	vs, notes = JudgeDisk(verdict.Defaults(), []observe.Member{{Target: observe.Target{Name: "m"}, WALFsync: metrics.DiskHistogram(98, 0, 0, 0, 1), BackendCommit: metrics.DiskHistogram(100)}}, 0, false)
	if len(vs) != 1 || len(notes) != 1 || !strings.Contains(notes[0], "too few") {
		t.Errorf("99 observations, one slow: verdicts %+v, notes %v: want a note instead of the WAL verdict", vs, notes)
	}
	// Deciding early (a capacity step), 99 slow calls are enough:
	// however fast the hundredth, the p99 stays over. Without it (check's
	// short loads) they are a note.
	slow := []observe.Member{{Target: observe.Target{Name: "m"}, WALFsync: metrics.DiskHistogram(0, 0, 0, 0, 99), BackendCommit: metrics.DiskHistogram(100)}}
	vs, notes = JudgeDisk(verdict.Defaults(), slow, 0, true)
	if len(vs) != 2 || len(notes) != 0 || vs[0].Check != "wal_fsync_p99" || vs[0].Status != verdict.Fail || !strings.Contains(vs[0].Detail, "only 99 observations") {
		t.Errorf("99 slow observations, deciding early: verdicts %+v, notes %v: want the WAL failed for good", vs, notes)
	}
	if vs, notes = JudgeDisk(verdict.Defaults(), slow, 0, false); len(vs) != 1 || len(notes) != 1 {
		t.Errorf("99 slow observations: verdicts %+v, notes %v: want a note instead of the WAL verdict", vs, notes)
	}
	// A step of `etcd capacity` on a slow-sync storage: 17 backend
	// commits, four of them over 64 ms, fail however fast three more.
	vs, _ = JudgeDisk(verdict.Defaults(), []observe.Member{{Target: observe.Target{Name: "m"}, WALFsync: metrics.DiskHistogram(0, 0, 0, 445), BackendCommit: metrics.DiskHistogram(0, 0, 0, 13, 0, 0, 0, 4)}}, 20, true)
	if len(vs) != 2 || vs[1].Check != "backend_commit_p99" || vs[1].Status != verdict.Fail {
		t.Errorf("17 commits, 4 slow: verdicts %+v: want the commits failed", vs)
	}
	// A capacity step judges fewer: 30 commits, three of them in the
	// 16-32 ms bucket, fail the 25 ms limit.
	vs, notes = JudgeDisk(verdict.Defaults(), []observe.Member{{Target: observe.Target{Name: "m"}, WALFsync: metrics.DiskHistogram(30), BackendCommit: metrics.DiskHistogram(0, 0, 0, 27, 0, 3)}}, 20, false)
	if len(vs) != 2 || len(notes) != 0 || vs[1].Check != "backend_commit_p99" || vs[1].Status != verdict.Fail {
		t.Errorf("30 observations, 20 enough: verdicts %+v, notes %v: want both judged, the commits failing", vs, notes)
	}
}

func TestBenchEmbedded(t *testing.T) {
	c := sharedCluster(t)
	l := testLoad(t, OpPut)
	l.Total, l.Clients = 200, 4
	out, err := Bench(context.Background(), l, BenchOptions{Targets: observe.EmbeddedTargets(c.MetricsURLs()), Thresholds: verdict.Defaults()})
	if err != nil {
		t.Fatalf("Bench: %v", err)
	}
	w := out.Workload
	f := w.Figure("member0_wal_fsyncs")
	if f == nil || f.Value < 1 {
		t.Fatalf("no WAL fsyncs counted over 200 puts: %+v", w.Figures)
	}
	// Each put is fsynced, often several together: never more fsyncs than
	// puts plus the few of the cluster's own (lease, compaction) entries.
	if f.Value > 250 {
		t.Errorf("%v WAL fsyncs for 200 puts: the delta includes more than the load", f.Value)
	}
	if w.Figure("member0_wal_fsync_p99") == nil || len(w.Verdicts) == 0 {
		t.Errorf("figures %+v verdicts %+v", w.Figures, w.Verdicts)
	}
	for _, name := range []string{"member0_leader_changes", "member0_slow_applies", "member0_db_size", "member0_apply_p99"} {
		if w.Figure(name) == nil {
			t.Errorf("no figure %s", name)
		}
	}
	if f := w.Figure("member0_leader_changes"); f != nil && f.Value != 0 {
		t.Errorf("%v leader changes on a single member during the load", f.Value)
	}
}

func TestBenchUnreadableMetrics(t *testing.T) {
	bad := []observe.Target{{Name: "member0", URL: "http://127.0.0.1:1/metrics"}}
	l := testLoad(t, OpPut)
	l.Total = 20
	if _, err := Bench(context.Background(), l, BenchOptions{Targets: bad, Thresholds: verdict.Defaults()}); err == nil {
		t.Error("unreadable metrics accepted without BestEffort")
	}
	l.RunID = uniqueID(t) + "-best-effort"
	out, err := Bench(context.Background(), l, BenchOptions{Targets: bad, Thresholds: verdict.Defaults(), BestEffort: true})
	if err != nil {
		t.Fatalf("best effort: %v", err)
	}
	if out.Workload.Ops != 20 || len(out.Workload.Verdicts) != 0 || !strings.Contains(strings.Join(out.Workload.Notes, "\n"), "no disk metrics for member0") {
		t.Errorf("ops %d, verdicts %+v, notes %v", out.Workload.Ops, out.Workload.Verdicts, out.Workload.Notes)
	}
}

func TestJudgeHealth(t *testing.T) {
	nan := math.NaN()
	ms := []observe.Member{
		{Target: observe.Target{Name: "member1"}, LeaderChanges: 2, SlowApplies: 0},
		{Target: observe.Target{Name: "member2"}, LeaderChanges: nan, SlowApplies: nan},
	}
	vs := JudgeHealth(verdict.DiagnoseDefaults(), ms)
	if len(vs) != 2 {
		t.Fatalf("%d verdicts, want 2 (member2 counts neither): %+v", len(vs), vs)
	}
	if vs[0].Check != "leader_changes" || vs[0].Status != verdict.Warn || vs[0].Source == "" {
		t.Errorf("leader changes: %+v, want a sourced WARN", vs[0])
	}
	if vs[1].Check != "slow_applies" || vs[1].Status != verdict.Pass {
		t.Errorf("slow applies: %+v, want PASS", vs[1])
	}
}

// With Settle, Bench returns once the member committed the deletion of the
// run's keys: the next load's first scrape does not count that commit.
// Without it the commit landed up to a batch interval later, in the next
// capacity step.
func TestBenchSettles(t *testing.T) {
	c := sharedCluster(t)
	url := c.MetricsURLs()[0]
	commits := func() float64 {
		f, err := metrics.Scrape(context.Background(), nil, url)
		if err != nil {
			t.Fatal(err)
		}
		h, err := metrics.HistogramOf(f, observe.BackendCommitMetric)
		if err != nil {
			t.Fatal(err)
		}
		return h.Count
	}
	before := commits()
	l := testLoad(t, OpPut)
	l.Total, l.Clients, l.KeySpaceSize, l.SequentialKeys = 200, 4, 200, true
	out, err := Bench(context.Background(), l, BenchOptions{Targets: observe.EmbeddedTargets(c.MetricsURLs()), Thresholds: verdict.Defaults(), Settle: true})
	if err != nil {
		t.Fatalf("Bench: %v", err)
	}
	if out.Deleted != 200 || len(out.Members) != 1 {
		t.Fatalf("deleted %d keys, %d members: want the run's 200 and one member", out.Deleted, len(out.Members))
	}
	during := out.Members[0].BackendCommit.Count
	if after := commits(); after < before+during+1 {
		t.Errorf("commits: %v before, %v during the load, %v when Bench returned: want the deletion's commit counted too", before, during, after)
	}
}

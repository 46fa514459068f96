package diskmodel

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"etcdbench/internal/etcdload/metrics"
	"etcdbench/internal/result"
	"etcdbench/internal/stats"
	"etcdbench/internal/testutil"
	"etcdbench/internal/verdict"
)

// One step of the model: etcd's backend commits what the WAL made durable,
// every 100 ms, and no sync carries more than the clients' bound.
func TestRunCapacityStep(t *testing.T) {
	cp, err := PresetNamed("quick")
	if err != nil {
		t.Fatal(err)
	}
	cp.Clients = 4
	s, err := RunCapacityStep(context.Background(), t.TempDir(), cp, 2000, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if s.MaxBatch != 4 || s.EntriesPerSync > 4 || s.Syncs == 0 {
		t.Errorf("%d syncs of %.1f entries, bound %d", s.Syncs, s.EntriesPerSync, s.MaxBatch)
	}
	// 2 s at one commit per 100 ms after the last: 10 to 20 commits.
	if s.BackendCommits < 5 || s.BackendCommits > 21 || s.BackendCommitP99Ns <= 0 {
		t.Errorf("%d backend commits, p99 %v", s.BackendCommits, time.Duration(s.BackendCommitP99Ns))
	}
	// Both are means over the same syncs, so their ratio is exact up to rounding.
	if got, want := s.BytesPerSync/s.EntriesPerSync, float64(CheckPerfShape.WALEntryBytes()); math.Abs(got-want) > 1e-6*want {
		t.Errorf("%.6f WAL bytes per entry, want %.0f", got, want)
	}
}

// The sweep's backend commit p99 is what etcd's own histogram would say:
// etcd 3.4 at 1,233 puts/s on a 2,000-IOPS volume reported 26.8 ms for
// 98 commits, three of them between 16 and 32 ms.
func TestEtcdReportedP99(t *testing.T) {
	h := stats.NewLatencyHistogram()
	for range 95 {
		if err := h.RecordValue(int64(5 * time.Millisecond)); err != nil {
			t.Fatal(err)
		}
	}
	for _, ms := range []int64{17, 18, 19} {
		if err := h.RecordValue(ms * int64(time.Millisecond)); err != nil {
			t.Fatal(err)
		}
	}
	exact := time.Duration(h.ValueAtQuantile(99))
	got := time.Duration(etcdReportedP99(h))
	// rank 97.02: the third of three in (16 ms, 32 ms], so 16 + 16*2.02/3.
	if want := 16*time.Millisecond + 10773333*time.Nanosecond; got < want-10*time.Microsecond || got > want+10*time.Microsecond {
		t.Errorf("etcd's p99 %v, want %v (the exact p99 is %v)", got, want, exact)
	}
	if exact >= 25*time.Millisecond || got < 25*time.Millisecond {
		t.Errorf("exact %v and as etcd reports it %v: want the limit between them", exact, got)
	}
	if etcdReportedP99(stats.NewLatencyHistogram()) != 0 {
		t.Error("no commits: want 0")
	}
}

// A step whose WAL passed goes on while its backend commits are too few
// to judge near the limit (disk's TestSampledHold: a run held stops at
// its cap).
func TestHoldStep(t *testing.T) {
	limit := 25 * time.Millisecond
	b := &etcdBackend{hist: stats.NewLatencyHistogram()}
	if b.holdStep(limit) {
		t.Error("no commits yet: nothing to hold for")
	}
	record := func(n int, d time.Duration) {
		for range n {
			stats.Record(b.hist, d)
			b.commits++
		}
	}
	record(30, 3*time.Millisecond)
	if b.holdStep(limit) {
		t.Error("30 commits of 3 ms: far under the limit, want no hold")
	}
	record(1, 15*time.Millisecond)
	if !b.holdStep(limit) {
		t.Error("31 commits, the slowest 15 ms: want the step held")
	}
	// Two commits over 32 ms: of the 110 a held step may reach, etcd's
	// p99 lies in its 32-64 ms bucket whatever the rest take.
	record(2, 40*time.Millisecond)
	if b.holdStep(limit) {
		t.Errorf("33 commits, two of 40 ms (etcd would report %v at 110): want the step ended, failed", time.Duration(etcdReportedP99With(b.hist, 77)))
	}
	if p := time.Duration(etcdReportedP99(b.hist)); p < limit {
		t.Errorf("the ended step's p99 as etcd reports it: %v, want the limit %v or more (judgeBackend fails it)", p, limit)
	}
	record(backendFullCommits, 3*time.Millisecond)
	if b.holdStep(limit) {
		t.Error("a full hundred commits: want no hold")
	}

}

// The backend's steps are judged on etcd's own histogram of their commits
// (its etcd_disk_backend_commit_duration_seconds, in this process's
// default registry) when it counted exactly them; when another etcd
// backend of the process committed too, on the commits as timed here.
func TestBackendOwnCommitHistogram(t *testing.T) {
	b, err := startEtcdBackend(t.TempDir(), CheckPerfShape, CheckPerfShape.WALEntryBytes())
	if err != nil {
		t.Fatal(err)
	}
	defer b.close()
	b.takeStep() // the open's commit belongs to no step
	// A fresh database (past backendDBCap): opening it commits, and so
	// does closing the old one (etcd's CommitAndStop); etcd's histogram
	// still counts exactly this backend's commits.
	b.reset()
	if d, ok := b.ownSince(true); !ok || d.Count != 2 {
		t.Fatalf("after starting over: etcd's histogram %+v, ok %v; want the reset's two commits", d, ok)
	}
	b.takeStep() // nor do the reset's
	feed := func(puts int64) { b.durable.Add(puts * b.entry) }
	commits := func() int64 { b.mu.Lock(); defer b.mu.Unlock(); return b.commits }
	for i := int64(1); i <= 5; i++ {
		feed(20)
		testutil.WaitFor(t, 10*time.Second, "a commit of the fed puts", func() bool { return commits() >= i })
	}
	d, ok := b.ownSince(true)
	if !ok || d.Count < 5 {
		t.Fatalf("etcd's own histogram since the step began: %+v, ok %v; want the step's 5 or more commits", d, ok)
	}
	// A commit under way: the WAL loop's look does not wait for it.
	b.commitMu.Lock()
	if _, ok := b.ownSince(false); ok {
		t.Error("a commit under way: want the look not to wait for etcd's histogram, and fall back")
	}
	b.commitMu.Unlock()
	c := b.takeStep()
	p99, n := c.P99, c.Commits
	if n < 5 || float64(n) != d.Count || p99 <= 0 || c.Timed {
		t.Errorf("step: %d commits, p99 %v, timed %v; etcd counted %v: want the same commits and etcd's own p99", n, time.Duration(p99), c.Timed, d.Count)
	}
	if want := int64(metrics.Quantile(0.99, d) * 1e9); p99 != want {
		t.Errorf("step p99 %v, want etcd's own %v", time.Duration(p99), time.Duration(want))
	}
	var s result.CapacityStep
	c.record(&s)
	if s.BackendCommitP99Ns != p99 || s.BackendCommits != n || s.BackendCommitTimed {
		t.Errorf("recorded %+v: want etcd's own p99 and commits, not marked timed", s)
	}

	// Another backend of the process commits too: etcd's histogram
	// counts both, and the step falls back to its own timing.
	other, err := startEtcdBackend(t.TempDir(), CheckPerfShape, CheckPerfShape.WALEntryBytes())
	if err != nil {
		t.Fatal(err)
	}
	defer other.close()
	feed(20)
	testutil.WaitFor(t, 10*time.Second, "a commit after the other backend's", func() bool { return commits() >= 1 })
	if _, ok := b.ownSince(true); ok {
		t.Error("etcd's histogram counted the other backend's commit too: want it not read as this backend's")
	}
	b.mu.Lock()
	want := etcdReportedP99(b.hist)
	b.mu.Unlock()
	c = b.takeStep()
	if c.Commits < 1 || c.P99 != want || !c.Timed {
		t.Errorf("fallen back: %d commits, p99 %v, timed %v, want the timed %v", c.Commits, time.Duration(c.P99), c.Timed, time.Duration(want))
	}
	s = result.CapacityStep{Decided: true, BackendCommits: c.Commits}
	c.P99 = time.Hour.Nanoseconds()
	c.record(&s)
	judgeBackend(&s, verdict.Defaults())
	if !s.BackendCommitTimed || !strings.Contains(s.Failed, "timed around each commit") {
		t.Errorf("a failing timed step: %+v; want it marked timed, and its reason to say so", s)
	}
}

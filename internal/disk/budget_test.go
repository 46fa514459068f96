package disk

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"etcdbench/internal/etcdload/metrics"
	"etcdbench/internal/result"
	"etcdbench/internal/stats"
	"etcdbench/internal/sysinfo"
	"etcdbench/internal/testutil"
	"etcdbench/internal/verdict"
)

func costStep(rate float64, pass bool, iops, perPut float64) result.CapacityStep {
	s := result.CapacityStep{Phase: "ladder", Rate: rate, Status: verdict.Pass, Decided: true,
		Device: &result.StepDevice{WriteIOPS: iops, WriteBytesPerSec: 4000 * iops, WritesPerEntry: perPut, BytesPerEntry: 4000 * perPut, FlushesPerEntry: perPut / 3}}
	if !pass {
		s.Status = verdict.Fail
	}
	return s
}

// Each load is costed at the passing step nearest its rate; a cap shows
// as the device's writes flat over the failing steps, and the budgets say
// whether the volume gives them.
func TestBudgets(t *testing.T) {
	c := &result.Capacity{Unit: "writes/s", Marks: CheckPerfMarks, Sizes: ClusterSizes, Steps: []result.CapacityStep{
		costStep(100, true, 370, 3.7), costStep(200, true, 640, 3.2), costStep(400, false, 990, 2.5),
		costStep(800, false, 1000, 1.25), costStep(300, true, 900, 3.0),
	}}
	undecided := costStep(1600, true, 1010, 0.63)
	undecided.Decided = false
	c.Steps = append(c.Steps, undecided)
	budgets, vol := Budgets(c, verdict.Defaults())
	if vol == nil || vol.WriteIOPS < 990 || vol.WriteIOPS > 1000 {
		t.Fatalf("volume %+v, want about 1000 write IOPS from the failing steps", vol)
	}
	if len(budgets) != len(CheckPerfMarks)+len(ClusterSizes) {
		t.Fatalf("%d budgets", len(budgets))
	}
	want := map[string]float64{"s": 150 * 3.2, "m": 1000 * 3.0, "small": 200 * 3.2}
	for _, b := range budgets {
		if w, ok := want[b.Name]; ok && (b.WriteIOPS < w-0.01 || b.WriteIOPS > w+0.01) {
			t.Errorf("budget %s: %.1f write IOPS, want %.1f", b.Name, b.WriteIOPS, w)
		}
		if b.Fits == nil || *b.Fits != (b.WriteIOPS <= vol.WriteIOPS) {
			t.Errorf("budget %s: fits %v with %.0f needed and %.0f given", b.Name, b.Fits, b.WriteIOPS, vol.WriteIOPS)
		}
		if b.SyncP99Ns != 10e6 || b.CommitP99Ns != 25e6 {
			t.Errorf("budget %s: latencies %d %d", b.Name, b.SyncP99Ns, b.CommitP99Ns)
		}
	}
	// One step with others' writes on the device does not hide the cap.
	c.Steps[3].Device.WriteIOPS = 1400
	c.Steps = append(c.Steps, costStep(1200, false, 1000, 0.8))
	if _, vol := Budgets(c, verdict.Defaults()); vol == nil || vol.WriteIOPS < 990 || vol.WriteIOPS > 1000 {
		t.Errorf("volume %+v with an outlier, want about 1000", vol)
	}
	// Writes that rise with the rate are no cap.
	c.Steps[2].Device.WriteIOPS, c.Steps[3].Device.WriteIOPS, c.Steps[len(c.Steps)-1].Device.WriteIOPS = 600, 1200, 2400
	if _, vol := Budgets(c, verdict.Defaults()); vol != nil {
		t.Errorf("volume %+v from rising writes", vol)
	}
}

// Other writers on the device: the sweep's own writes (the device's less
// their idle rate) judge whether a cap bends the curve, so their steady
// rate is no cap; a cap under them is still found, net of them.
func TestFindVolumeNetOfOthers(t *testing.T) {
	// Measured: 601 writes/s by others, the device at 711-956/s over
	// failing steps of 13 to 100 writes/s on a disk with no cap.
	c := &result.Capacity{Unit: "writes/s", BackgroundWriteIOPS: 601, Steps: []result.CapacityStep{
		costStep(13, false, 711, 54), costStep(25, false, 744, 30), costStep(50, false, 821, 16), costStep(100, false, 956, 9.5),
	}}
	if vol := findVolume(c); vol != nil {
		t.Errorf("volume %+v from others' steady writes", vol)
	}
	// A 1,000-IOPS cap for the sweep, with 600/s of others' beside it.
	c = &result.Capacity{Unit: "writes/s", BackgroundWriteIOPS: 600, Steps: []result.CapacityStep{
		costStep(400, true, 1500, 2.2), costStep(800, false, 1590, 1.2), costStep(1600, false, 1600, 0.6),
	}}
	vol := findVolume(c)
	if vol == nil || vol.WriteIOPS < 980 || vol.WriteIOPS > 1000 || !strings.Contains(vol.Evidence, "other processes wrote 600/s more") {
		t.Errorf("volume %+v, want about 1,000 write IOPS net of others' 600", vol)
	}
}

// One step of the model: etcd's backend commits what the WAL made durable,
// every 100 ms, and no sync carries more than the clients' bound.
func TestRunCapacityStep(t *testing.T) {
	p, err := PresetNamed("quick")
	if err != nil {
		t.Fatal(err)
	}
	cp := p.Capacity
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

// A burst bucket: the ladder passed on credits at up to 3,000 writes/s,
// then every step got about 600. The answer falls to the highest pass the
// sustained cap gave, and the burst is named.
func TestBurst(t *testing.T) {
	c := &result.Capacity{Unit: "writes/s", Rate: 1600, Upper: 1900, Marks: CheckPerfMarks, Sizes: ClusterSizes, Steps: []result.CapacityStep{
		costStep(100, true, 290, 2.9), costStep(200, true, 560, 2.6), costStep(400, true, 990, 2.5),
		costStep(800, true, 1900, 2.4), costStep(1600, true, 3000, 1.9), costStep(3200, false, 610, 0.2),
		costStep(2260, false, 600, 0.3), costStep(1900, false, 590, 0.3),
	}}
	for i := range c.Marks {
		c.Marks[i].Carried = c.Marks[i].Rate <= c.Rate
	}
	c.Budgets, c.Volume = Budgets(c, verdict.Defaults())
	Burst(c)
	if c.Volume == nil || c.Volume.BurstWriteIOPS != 3000 || c.Volume.WriteIOPS < 590 || c.Volume.WriteIOPS > 610 {
		t.Fatalf("volume %+v, want about 600 sustained and a burst of 3000", c.Volume)
	}
	if c.Rate != 200 || c.Upper != 400 {
		t.Errorf("answer %v..%v, want 200..400: the passes from 400 up ran on the burst", c.Rate, c.Upper)
	}
	for _, m := range c.Marks {
		if m.Carried != (m.Rate <= 200) {
			t.Errorf("mark %s (%v/s) carried %v at 200", m.Name, m.Rate, m.Carried)
		}
	}
	// A plain cap: the passes stay under it, nothing changes.
	c = &result.Capacity{Unit: "writes/s", Rate: 400, Upper: 800, Steps: []result.CapacityStep{
		costStep(200, true, 560, 2.6), costStep(400, true, 990, 2.5), costStep(800, false, 1000, 1.25), costStep(1600, false, 1010, 0.6),
	}}
	c.Budgets, c.Volume = Budgets(c, verdict.Defaults())
	Burst(c)
	if c.Volume == nil || c.Volume.BurstWriteIOPS != 0 || c.Rate != 400 {
		t.Errorf("a plain cap: volume %+v rate %v, want no burst and 400", c.Volume, c.Rate)
	}
}

// A step whose WAL passed goes on while its backend commits are too few
// to judge near the limit; a run held by its backend stops at its cap.
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

	// The WAL's decision waits for the hold, and the cap ends it.
	held := 0
	sm := newSampled(stats.StopRule{Threshold: 10 * time.Millisecond, Quantile: 0.99, Confidence: 0.5, Interval: time.Second}, ModeAdaptive, nil)
	sm.hold = func() bool { held++; return held < 3 }
	start := time.Now()
	sm.begin(start)
	stopped := 0
	for i := 1; i <= 5000 && stopped == 0; i++ {
		if sm.add(time.Microsecond, start.Add(time.Duration(i)*time.Millisecond)) {
			stopped = i
		}
	}
	if held != 3 || stopped == 0 || sm.Decision.Outcome != stats.Pass {
		t.Errorf("held %d times, stopped after %d ms with %q: want a pass that waited for the third look", held, stopped, sm.Decision.Outcome)
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

// A step's cost per put is net of the other writers' idle rate; the
// device's own figures are not.
func TestStepCostNetOfOthers(t *testing.T) {
	p := &deviceProbe{}
	t0 := time.Now()
	a := devReading{t: t0, ok: true}
	b := devReading{t: t0.Add(2 * time.Second), ok: true, ds: sysinfo.DiskStats{WriteIOs: 2 * 1000, WriteSectors: 2 * 1000 * 8, FlushIOs: 2 * 300}}
	d := p.step(a, b, 2*100) // 100 puts/s
	if d.WriteIOPS != 1000 || d.FlushesPerSec != 300 || d.WritesPerEntry != 10 {
		t.Fatalf("device figures %+v, want the device's own 1000 writes/s, 300 flushes/s, 10 writes per put", d)
	}
	c := &result.Capacity{Steps: []result.CapacityStep{{Rate: 100, Device: d}, {Rate: 50, Device: p.step(a, b, 2*50)}}}
	netOfOthers(c, 600, 600*4096, 200)
	if d.WriteIOPS != 1000 || d.WritesPerEntry != 4 || d.FlushesPerEntry != 1 || d.BytesPerEntry != 400*4096/100 {
		t.Errorf("per put %+v, want (1000-600)/100 = 4 writes, 1 flush, %d bytes, the device's 1000 writes/s", d, 400*4096/100)
	}
	if c.BackgroundWriteIOPS != 600 || c.Steps[1].Device.WritesPerEntry != 8 {
		t.Errorf("background %v, the second step's %v writes per put", c.BackgroundWriteIOPS, c.Steps[1].Device.WritesPerEntry)
	}
	netOfOthers(c, 5000, 0, 0) // more than the step's: never below 0
	if d.WritesPerEntry != 0 {
		t.Errorf("writes per put %v, want 0", d.WritesPerEntry)
	}
}

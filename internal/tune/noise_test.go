package tune

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"etcdbench/internal/etcdload/metrics"
	"etcdbench/internal/etcdload/observe"
	"etcdbench/internal/etcdrun"
	"etcdbench/internal/result"
	"etcdbench/internal/stats"
	"etcdbench/internal/verdict"
)

func TestNewSpread(t *testing.T) {
	cases := []struct {
		name             string
		in               []float64
		median, min, max float64
	}{
		{"odd", []float64{3, 1, 2}, 2, 1, 3},
		{"even", []float64{4, 1, 3, 2}, 2.5, 1, 4},
		{"one", []float64{7}, 7, 7, 7},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := NewSpread(tc.in)
			if s.Median != tc.median || s.Min != tc.min || s.Max != tc.max {
				t.Errorf("NewSpread(%v) = %v [%v..%v], want %v [%v..%v]", tc.in, s.Median, s.Min, s.Max, tc.median, tc.min, tc.max)
			}
		})
	}
	if s := NewSpread(nil); !math.IsNaN(s.Median) || s.N() != 0 {
		t.Errorf("empty spread %+v, want NaN", s)
	}
}

func TestSeparated(t *testing.T) {
	cases := []struct {
		name string
		a, b []float64
		want bool
	}{
		{"apart", []float64{100, 104, 102}, []float64{110, 108, 111}, true},
		{"apart reversed", []float64{110, 108, 111}, []float64{100, 104, 102}, true},
		{"one round overlaps", []float64{100, 104, 109}, []float64{110, 108, 111}, false},
		{"touching is overlap", []float64{100, 104, 108}, []float64{110, 108, 111}, false},
		{"large medians gap, wide spread", []float64{50, 100, 200}, []float64{150, 300, 400}, false},
		{"identical", []float64{0, 0, 0}, []float64{0, 0, 0}, false},
		{"one round cannot decide", []float64{100}, []float64{200}, false},
		{"one side with one round", []float64{100, 101}, []float64{200}, false},
		{"two rounds", []float64{100, 101}, []float64{200, 201}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Separated(NewSpread(tc.a), NewSpread(tc.b)); got != tc.want {
				t.Errorf("Separated(%v, %v) = %v, want %v", tc.a, tc.b, got, tc.want)
			}
		})
	}
}

func TestChanceOfSeparation(t *testing.T) {
	for _, tc := range []struct {
		n    int
		want float64
	}{{1, 1}, {2, 2.0 / 6}, {3, 2.0 / 20}, {4, 2.0 / 70}, {5, 2.0 / 252}} {
		if got := ChanceOfSeparation(tc.n, tc.n); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("ChanceOfSeparation(%d, %d) = %v, want %v", tc.n, tc.n, got, tc.want)
		}
	}
	// The formula against counting: of all orderings of 3 a's and 3
	// b's, the ones with the a's all first or all last.
	var all, apart int
	for mask := range 1 << 6 {
		if bitsSet(mask) != 3 {
			continue
		}
		all++
		if mask == 0b000111 || mask == 0b111000 {
			apart++
		}
	}
	if got, want := ChanceOfSeparation(3, 3), float64(apart)/float64(all); math.Abs(got-want) > 1e-12 {
		t.Errorf("ChanceOfSeparation(3, 3) = %v, counting gives %v", got, want)
	}
}

func bitsSet(x int) int {
	n := 0
	for ; x > 0; x >>= 1 {
		n += x & 1
	}
	return n
}

// fakeRun is a finished run's measurement with the given figures, as
// etcdload.Bench makes them: ops per second, request latency
// percentiles, verdicts, and each member's WAL fsync p99 (its backend
// commits twice as slow), all in one bucket of etcd's histogram whose
// upper bound is that p99.
func fakeRun(opsPerSec float64, p50ms, p99ms float64, walP99 []float64, status verdict.Status) *etcdrun.Measurement {
	req := stats.Summary{Count: 1000, Percentiles: []stats.Percentile{{P: 50, ValueNs: int64(p50ms * 1e6)}, {P: 99, ValueNs: int64(p99ms * 1e6)}}}
	w := result.Workload{
		Name: "etcd-put", Ops: 1000, OpsPerSec: opsPerSec, Parameters: map[string]any{},
		Latencies: []result.Latency{{Name: "request", Summary: req}},
		Verdicts:  []verdict.Verdict{{Check: "wal_fsync_p99", Status: status}},
	}
	// A histogram whose p99 is exactly p: 99 observations at or under it
	// (in the bucket ending at p), one above.
	hist := func(p float64) metrics.Histogram {
		return metrics.Histogram{Count: 100, Buckets: []metrics.Bucket{{UpperBound: 0}, {UpperBound: p, Count: 99}, {UpperBound: math.Inf(1), Count: 100}}}
	}
	m := &etcdrun.Measurement{Result: &result.Result{Workloads: []result.Workload{w}}, Request: &req}
	m.Load = &m.Result.Workloads[0]
	for i, v := range walP99 {
		m.Members = append(m.Members, observe.Member{Target: observe.Target{Name: fmt.Sprintf("member%d", i)},
			WALFsync: hist(v), BackendCommit: hist(2 * v)})
	}
	return m
}

// TestExecuteAndSummarize runs a two-combination plan over three rounds
// through a RunFunc that returns synthetic results: c2 has clearly more
// throughput (ranges apart), the same latency p50 (ranges overlap), and a
// slower member.
func TestExecuteAndSummarize(t *testing.T) {
	p, err := NewPlan(base("."), mustVary(t, "backend-batch-limit=100,10000"), 3)
	if err != nil {
		t.Fatal(err)
	}
	figures := map[string][]*etcdrun.Measurement{
		"c1": {fakeRun(1000, 1.0, 5, []float64{0.002}, verdict.Pass), fakeRun(1020, 1.1, 5, []float64{0.002}, verdict.Pass), fakeRun(990, 0.9, 5, []float64{0.003}, verdict.Pass)},
		"c2": {fakeRun(1500, 1.05, 4, []float64{0.002, 0.020}, verdict.Fail), fakeRun(1480, 0.95, 4, []float64{0.002, 0.021}, verdict.Pass), fakeRun(1510, 1.0, 4, []float64{0.019}, verdict.Pass)},
	}
	var order []string
	var saved int
	runs, err := p.Execute(context.Background(), func(_ context.Context, c Combination, s Slot) (*etcdrun.Measurement, error) {
		order = append(order, fmt.Sprintf("r%d:%s", s.Round, c.ID()))
		return figures[c.ID()][s.Round-1], nil
	}, func(Run) error { saved++; return nil })
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(order, " "); got != "r1:c1 r1:c2 r2:c2 r2:c1 r3:c1 r3:c2" {
		t.Errorf("order %s", got)
	}
	if len(runs) != 6 || saved != 6 {
		t.Fatalf("%d runs, %d saved, want 6", len(runs), saved)
	}
	w := runs[2].Workload()
	if w.Parameters["tune_combination"] != "c2" || w.Parameters["tune_round"] != 2 || w.Parameters["tune_order"] != 3 {
		t.Errorf("run 3's parameters %v", w.Parameters)
	}

	s := Summarize(p.Load, p.Combinations, p.Rounds, runs)
	tp := s.Cells[1][0]
	if tp.Median != 1500 || tp.Min != 1480 || tp.Max != 1510 {
		t.Errorf("c2 throughput %v [%v..%v], want 1500 [1480..1510]", tp.Median, tp.Min, tp.Max)
	}
	if wal := s.Cells[1][3]; wal.Median != 0.020 || wal.Min != 0.019 {
		t.Errorf("c2 WAL p99 %+v, want the slowest member's: median 0.020, min 0.019", wal)
	}
	if *s.Worst[1] != verdict.Fail || *s.Worst[0] != verdict.Pass {
		t.Errorf("worst verdicts %v %v, want PASS FAIL", *s.Worst[0], *s.Worst[1])
	}
	var diffs []string
	for _, d := range s.Diffs {
		diffs = append(diffs, fmt.Sprintf("%s:c%d>c%d", d.Metric.ID, d.Better+1, d.Worse+1))
	}
	want := "throughput:c2>c1 latency_p99:c2>c1 wal_fsync_p99:c1>c2 backend_commit_p99:c1>c2"
	if got := strings.Join(diffs, " "); got != want {
		t.Errorf("differences %s, want %s", got, want)
	}
	if math.Abs(s.Chance-0.1) > 1e-9 {
		t.Errorf("chance %v, want 0.1", s.Chance)
	}

	var b bytes.Buffer
	if err := WriteText(&b, s); err != nil {
		t.Fatal(err)
	}
	text := b.String()
	for _, sub := range []string{
		"2 combinations x 3 round(s), alternating: r1 c1 c2, r2 c2 c1, r3 c1 c2",
		"c2  backend-batch-limit=10000",
		"1500 [1480..1510]",
		"20ms [19ms..21ms]",
		"FAIL",
		"throughput: c2 (backend-batch-limit=10000) 1500 is better than c1 (backend-batch-limit=100) 1000: c2/c1 = 1.50",
		"probability 0.100",
	} {
		if !strings.Contains(text, sub) {
			t.Errorf("text lacks %q:\n%s", sub, text)
		}
	}

	sw := s.Workload()
	if sw.Stop.Mode != "count" || sw.Latencies == nil || sw.Series == nil || sw.Verdicts == nil || sw.Ops != 6 {
		t.Errorf("summary workload stop %+v, latencies %v, series %v, verdicts %v, ops %d: want the schema's count mode, empty arrays, 6 runs",
			sw.Stop, sw.Latencies, sw.Series, sw.Verdicts, sw.Ops)
	}
	if f := sw.Figure("c2_throughput_median"); f == nil || f.Value != 1500 {
		t.Errorf("summary figure c2_throughput_median %+v", f)
	}
	if f := sw.Figure("c1_latency_p50_max"); f == nil || math.Abs(f.Value-0.0011) > 1e-9 {
		t.Errorf("summary figure c1_latency_p50_max %+v, want 0.0011 s", f)
	}
}

func TestOneRoundDecidesNothing(t *testing.T) {
	p, err := NewPlan(base("."), mustVary(t, "clients=1,8"), 1)
	if err != nil {
		t.Fatal(err)
	}
	runs, err := p.Execute(context.Background(), func(_ context.Context, c Combination, _ Slot) (*etcdrun.Measurement, error) {
		return fakeRun(float64(1000*(c.Index+1)), 1, 2, []float64{0.001}, verdict.Pass), nil
	}, func(Run) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	s := Summarize(p.Load, p.Combinations, p.Rounds, runs)
	if len(s.Diffs) != 0 || !math.IsNaN(s.Chance) {
		t.Errorf("one round gave differences %v, chance %v", s.Diffs, s.Chance)
	}
	if l := s.DiffLines(); len(l) != 1 || !strings.Contains(l[0], "--rounds 3") {
		t.Errorf("diff lines %q, want advice to run more rounds", l)
	}
}

func TestExecuteStopsAtError(t *testing.T) {
	p, err := NewPlan(base("."), mustVary(t, "clients=1,8"), 2)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	calls := 0
	runs, err := p.Execute(ctx, func(ctx context.Context, _ Combination, _ Slot) (*etcdrun.Measurement, error) {
		calls++
		if calls == 2 {
			cancel() // an interrupt during the second run
			r := fakeRun(1, 1, 1, nil, verdict.Pass)
			r.Result.Interrupted = true
			return r, ctx.Err()
		}
		return fakeRun(1000, 1, 2, nil, verdict.Pass), nil
	}, func(Run) error { return nil })
	if !errors.Is(err, context.Canceled) || calls != 2 || len(runs) != 2 {
		t.Fatalf("err %v after %d calls and %d runs, want context.Canceled after 2 and 2", err, calls, len(runs))
	}
	s := Summarize(p.Load, p.Combinations, p.Rounds, runs)
	if len(s.Runs) != 1 {
		t.Errorf("summary counts %d runs, want only the finished one", len(s.Runs))
	}
}

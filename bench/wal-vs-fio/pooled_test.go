package main

import (
	"math"
	"strings"
	"testing"
)

// mkDist is a dist of n samples at each of values.
func mkDist(n int64, values ...int64) dist {
	m := map[int64]int64{}
	for _, v := range values {
		m[v] += n
	}
	return distFromMap(m)
}

func TestPoolQuantiles(t *testing.T) {
	a := mkDist(1, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10) // 1..10
	b := mkDist(10, 100)                          // ten samples at 100
	p := newPool([]dist{a, b})
	tests := []struct {
		name   string
		weight []int
		ps     []float64
		want   []float64
	}{
		{"a alone", []int{1, 0}, []float64{50, 90, 99, 100}, []float64{5, 9, 10, 10}},
		{"b alone", []int{0, 1}, []float64{1, 50}, []float64{100, 100}},
		{"both: half the samples at 100", []int{1, 1}, []float64{50, 55, 99}, []float64{10, 100, 100}},
		{"a twice, b once", []int{2, 1}, []float64{66, 70}, []float64{10, 100}},
		{"nothing", []int{0, 0}, []float64{50}, []float64{math.NaN()}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := p.quantiles(tc.weight, tc.ps)
			for i := range got {
				if got[i] != tc.want[i] && !(math.IsNaN(got[i]) && math.IsNaN(tc.want[i])) {
					t.Errorf("p%v = %v, want %v", tc.ps[i], got[i], tc.want[i])
				}
			}
		})
	}
}

func TestDistFromBins(t *testing.T) {
	d, err := distFromBins(map[string]int64{"300": 2, "100": 1}, map[string]int64{"100": 4, "200": 0})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Values) != 2 || d.Values[0] != 100 || d.Counts[0] != 5 || d.Values[1] != 300 || d.Counts[1] != 2 || d.N() != 7 {
		t.Errorf("dist %+v, want 5 at 100 and 2 at 300 (empty bins left out)", d)
	}
	for _, bad := range []map[string]int64{{"x": 1}, {"-5": 1}, {"5": -1}} {
		if _, err := distFromBins(bad); err == nil {
			t.Errorf("bins %v accepted", bad)
		}
	}
}

func TestInterval(t *testing.T) {
	xs := make([]float64, 2000)
	for i := range xs {
		xs[i] = float64(i)
	}
	if lo, hi := interval(xs, 0.95); lo != 50 || hi != 1949 {
		t.Errorf("interval of 0..1999 = %v..%v, want 50..1949", lo, hi)
	}
	if lo, hi := interval([]float64{math.NaN(), 3}, 0.95); lo != 3 || hi != 3 {
		t.Errorf("one value: %v..%v", lo, hi)
	}
	if lo, _ := interval([]float64{math.NaN()}, 0.95); !math.IsNaN(lo) {
		t.Errorf("no values: %v", lo)
	}
}

// TestComparePooled builds rounds whose truth is known: a subject that is
// the base twice as slow gives 2 everywhere; one whose only difference is
// where a stall fell gives a pooled p99 ratio of 1, while the per-round
// p99 ratios swing.
func TestComparePooled(t *testing.T) {
	base := []dist{mkDist(100, 200), mkDist(100, 210), mkDist(100, 190), mkDist(100, 205)}
	var slow []dist
	for _, d := range base {
		s := dist{Counts: d.Counts}
		for _, v := range d.Values {
			s.Values = append(s.Values, 2*v)
		}
		slow = append(slow, s)
	}
	for _, r := range comparePooled("slow / base", slow, base, &pooledTarget) {
		if r.Ratio != 2 || r.Lo != 2 || r.Hi != 2 || r.RoundMedian != 2 {
			t.Errorf("%s: %+v, want 2 throughout", r.Metric, r)
		}
		if (r.Target != nil) != (r.P == 99) || r.Met {
			t.Errorf("%s: target %v met %v, want the p99 row judged and not met", r.Metric, r.Target, r.Met)
		}
	}

	// Each run: 970 syncs at 200, 30 at 1000 (a stall) or at 210. The
	// stall falls in different rounds for the two sides, twice each.
	run := func(stall bool) dist {
		d := map[int64]int64{200: 970, 210: 30}
		if stall {
			d = map[int64]int64{200: 970, 1000: 30}
		}
		return distFromMap(d)
	}
	a := []dist{run(true), run(false), run(true), run(false)}
	b := []dist{run(false), run(true), run(false), run(true)}
	rows := comparePooled("a / b", a, b, &pooledTarget)
	p99 := rows[1]
	if p99.Metric != metricP99 || p99.Ratio != 1 || !p99.Met || p99.Base != 1000 {
		t.Errorf("pooled p99 %+v, want 1000 on both sides, ratio 1, met", p99)
	}
	if p99.RoundMin != 0.21 || p99.RoundMax != 1000.0/210 {
		t.Errorf("per-round p99 ratios %v..%v, want 0.21..4.76", p99.RoundMin, p99.RoundMax)
	}
	if p99.Lo > 1 || p99.Hi < 1 || p99.Level != bootstrapLevel {
		t.Errorf("interval %v..%v does not hold the ratio 1", p99.Lo, p99.Hi)
	}
}

func TestSummarizePooled(t *testing.T) {
	d := mkDist(100, 200, 300)
	withDists := func(control bool) round {
		r := round{Fio: measurement{dist: d}, Etcd: measurement{dist: d}}
		if control {
			r.Control = &measurement{dist: d}
		}
		return r
	}
	rs := []round{withDists(true), withDists(true), withDists(false), {}}
	rows := summarizePooled(rs)
	if len(rows) != len(pooledPercentiles) || rows[0].Pair != pairEtcd {
		t.Fatalf("rows %+v: want etcdbench/fio only (the control ran in 2 rounds, fewer than 3)", rows)
	}
	rs = append(rs, withDists(true))
	rows = summarizePooled(rs)
	if len(rows) != 2*len(pooledPercentiles) || rows[len(rows)-1].Pair != pairControl || rows[len(rows)-1].Target != nil {
		t.Fatalf("rows %+v: want both pairs, the control without a target", rows)
	}
	var b strings.Builder
	if err := renderPooled(&b, 5, rows); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"POOLED over 5 rounds", "etcdbench / fio      fdatasync p99    300ns  300ns  1.00          1.00..1.00  1.00 (1.00..1.00)  0.95..1.05  yes",
		"fio (control) / fio  fdatasync p99.9", "issue 14"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if summarizePooled([]round{{}, {}, {}}) != nil {
		t.Error("rounds without dists gave pooled rows")
	}
}

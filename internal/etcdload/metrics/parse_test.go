package metrics

import (
	"errors"
	"math"
	"os"
	"testing"
)

func readFixture(t testing.TB) []byte {
	b, err := os.ReadFile("testdata/etcd-metrics.txt")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestParseAndHistogramOf(t *testing.T) {
	f, err := Parse(readFixture(t))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	h, err := HistogramOf(f, "etcd_disk_wal_fsync_duration_seconds")
	if err != nil {
		t.Fatalf("HistogramOf: %v", err)
	}
	if h.Count != 100 || len(h.Buckets) != 6 || h.Buckets[5].Count != 100 {
		t.Fatalf("histogram %+v", h)
	}
	// rank 99 is the top of (8 ms, 16 ms].
	if q := Quantile(0.99, h); !same(q, 0.016) {
		t.Errorf("p99 %g, want 0.016", q)
	}
	// rank 50 in (4 ms, 8 ms]: 0.004 + 0.004*10/40.
	if q := Quantile(0.5, h); !same(q, 0.005) {
		t.Errorf("p50 %g, want 0.005", q)
	}
	two, err := HistogramOf(f, "two_series")
	if err != nil {
		t.Fatalf("two series: %v", err)
	}
	if two.Count != 6 || two.Buckets[0].Count != 4 || two.Sum != 8 {
		t.Errorf("sum of two series: %+v", two)
	}
	if _, err := HistogramOf(f, "nope"); !errors.Is(err, ErrNoMetric) {
		t.Errorf("missing metric: %v", err)
	}
	if _, err := HistogramOf(f, "etcd_server_has_leader"); !errors.Is(err, ErrNotHistogram) {
		t.Errorf("gauge: %v", err)
	}
}

func TestParseRejectsGarbage(t *testing.T) {
	for _, in := range []string{"not metrics at all {", "# TYPE x histogram\nx_bucket{le=\"a\"} 1\n"} {
		if _, err := Parse([]byte(in)); !errors.Is(err, ErrParse) {
			t.Errorf("Parse(%q): %v, want ErrParse", in, err)
		}
	}
}

// FuzzParse feeds arbitrary bytes to Parse and every histogram it finds
// to Quantile: nothing may panic, and where Quantile's contract gives a
// number (distinct finite bounds, counts that are numbers and not
// negative, some observations) a quantile with 0 < q <= 1 is not NaN, and
// any quantile that is not NaN (q = 0 over an empty lowest bucket is 0/0,
// as in Prometheus) is never below the lowest bucket's lower end (0, or
// that bucket's bound when it is not positive) nor above the highest
// finite bound.
func FuzzParse(f *testing.F) {
	f.Add(readFixture(f))
	f.Add([]byte("# TYPE h histogram\nh_bucket{le=\"1\"} 1\nh_count 1\n"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, b []byte) {
		fams, err := Parse(b)
		if err != nil {
			return
		}
		for name := range fams {
			h, err := HistogramOf(fams, name)
			if err != nil {
				continue
			}
			lo, hi, judged := quantileRange(h)
			for _, q := range []float64{0, 0.5, 0.99, 1} {
				v := Quantile(q, h)
				if !judged {
					continue
				}
				if math.IsNaN(v) {
					if q > 0 {
						t.Errorf("%s: quantile %g is NaN (buckets %+v)", name, q, h.Buckets)
					}
					continue
				}
				if v < lo || v > hi+1e-9*math.Max(1, math.Abs(hi)) {
					t.Errorf("%s: quantile %g is %g, want it in [%g, %g] (buckets %+v)", name, q, v, lo, hi, h.Buckets)
				}
			}
			if _, err := Delta(h, h); err != nil && !errors.Is(err, ErrReset) {
				t.Errorf("Delta of %s with itself: %v", name, err)
			}
		}
	})
}

// quantileRange returns the range every quantile of h lies in - from the
// lowest bucket's lower end (0 unless that bucket's bound is not positive,
// as histogram_quantile assumes) to the highest finite bound - and whether
// Quantile's contract promises a number in it: distinct bounds (no sums of
// coalesced buckets that could overflow), finite but for one +Inf, counts
// finite and not negative, observations in the +Inf bucket and a width
// that does not overflow.
func quantileRange(h Histogram) (lo, hi float64, ok bool) {
	lo, hi = math.Inf(1), math.Inf(-1)
	var observations float64
	seen := map[float64]bool{}
	for _, b := range h.Buckets {
		if math.IsNaN(b.Count) || math.IsInf(b.Count, 0) || b.Count < 0 || math.IsNaN(b.UpperBound) || math.IsInf(b.UpperBound, -1) || seen[b.UpperBound] {
			return 0, 0, false
		}
		seen[b.UpperBound] = true
		if math.IsInf(b.UpperBound, 1) {
			observations = b.Count
			continue
		}
		lo, hi = math.Min(lo, b.UpperBound), math.Max(hi, b.UpperBound)
	}
	lo = math.Min(lo, 0)
	if len(seen) < 2 || !(observations > 0) || math.IsInf(hi, -1) || math.IsInf(hi-lo, 0) {
		return 0, 0, false
	}
	return lo, hi, true
}

func TestValueOfAndHistogramDelta(t *testing.T) {
	f, err := Parse(readFixture(t))
	if err != nil {
		t.Fatal(err)
	}
	if v, err := ValueOf(f, "grpc_server_handled_total"); err != nil || v != 12 {
		t.Errorf("counter sum %v, %v: want 12", v, err)
	}
	if v, err := ValueOf(f, "etcd_server_has_leader"); err != nil || v != 1 {
		t.Errorf("gauge %v, %v: want 1", v, err)
	}
	if _, err := ValueOf(f, "two_series"); err == nil {
		t.Error("a histogram read as a value")
	}
	if _, err := ValueOf(f, "nope"); !errors.Is(err, ErrNoMetric) {
		t.Errorf("missing: %v", err)
	}
	empty := Families{}
	if h, ok := HistogramDelta(empty, f, "two_series"); !ok || h.Count != 6 {
		t.Errorf("missing before: %+v %v, want the after histogram", h, ok)
	}
	if h, ok := HistogramDelta(f, f, "two_series"); !ok || h.Count != 0 {
		t.Errorf("same scrape: %+v %v, want empty", h, ok)
	}
	if _, ok := HistogramDelta(f, empty, "two_series"); ok {
		t.Error("missing after accepted")
	}
}

package metrics

import (
	"errors"
	"math"
	"testing"
)

var inf = math.Inf(1)

func hist(bounds, counts []float64) Histogram {
	h := Histogram{}
	for i := range bounds {
		h.Buckets = append(h.Buckets, Bucket{UpperBound: bounds[i], Count: counts[i]})
	}
	if len(counts) > 0 {
		h.Count = counts[len(counts)-1]
	}
	return h
}

func TestQuantile(t *testing.T) {
	small := hist([]float64{1, 2, 4, inf}, []float64{2, 4, 8, 10})
	// etcd's disk buckets (1 ms doubling), 50 observations in (4 ms, 8 ms]
	// and 50 in (8 ms, 16 ms].
	etcd := hist([]float64{0.001, 0.002, 0.004, 0.008, 0.016, 0.032, inf}, []float64{0, 0, 0, 50, 100, 100, 100})
	cases := []struct {
		name string
		q    float64
		h    Histogram
		want float64
	}{
		{"median interpolated in (2,4]", 0.5, small, 2.5},     // rank 5: 2 + 2*(5-4)/4
		{"first bucket starts at 0", 0.1, small, 0.5},         // rank 1: 0 + 1*1/2
		{"rank at a bucket's top", 0.8, small, 4},             // rank 8: 2 + 2*4/4
		{"q 0", 0, small, 0},                                  // rank 0 in the first bucket
		{"rank in +Inf: last finite bound", 0.99, small, 4},   // rank 9.9 > 8
		{"q 1 in +Inf", 1, small, 4},                          // rank 10 > 8
		{"etcd p99 between 8 and 16 ms", 0.99, etcd, 0.01584}, // 0.008 + 0.008*49/50
		{"etcd p50 at the 8 ms bound", 0.5, etcd, 0.008},      // rank 50 = count of le=0.008
		{"q below 0", -0.1, small, math.Inf(-1)},              // as Prometheus
		{"q above 1", 1.1, small, math.Inf(1)},                // as Prometheus
		{"empty", 0.99, hist([]float64{1, inf}, []float64{0, 0}), math.NaN()},
		{"no +Inf bucket", 0.5, hist([]float64{1, 2}, []float64{1, 2}), math.NaN()},
		{"only +Inf", 0.5, hist([]float64{inf}, []float64{3}), math.NaN()},
		{"no buckets", 0.5, Histogram{}, math.NaN()},
		{"non-positive first bound", 0.1, hist([]float64{-1, 0, inf}, []float64{2, 4, 4}), -1},
		{"unsorted buckets", 0.5, hist([]float64{4, inf, 1, 2}, []float64{8, 10, 2, 4}), 2.5},
		{"non-monotonic counts raised", 0.5, hist([]float64{1, 2, 4, inf}, []float64{2, 1, 8, 10}), 3}, // 1 raised to 2: rank 5 in (2,4]: 2+2*(5-2)/(8-2)
		{"NaN q", math.NaN(), small, math.NaN()},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Quantile(tc.q, tc.h)
			if !same(got, tc.want) {
				t.Errorf("Quantile(%g) = %g, want %g", tc.q, got, tc.want)
			}
		})
	}
}

func same(a, b float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	if math.IsInf(a, 0) || math.IsInf(b, 0) {
		return a == b
	}
	return math.Abs(a-b) < 1e-12
}

func TestDelta(t *testing.T) {
	before := hist([]float64{1, 2, inf}, []float64{1, 2, 3})
	before.Sum = 2.5
	after := hist([]float64{1, 2, inf}, []float64{4, 6, 10})
	after.Sum = 12.5
	d, err := Delta(before, after)
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{3, 4, 7}
	for i, b := range d.Buckets {
		if b.Count != want[i] {
			t.Errorf("bucket le=%g: %g, want %g", b.UpperBound, b.Count, want[i])
		}
	}
	if d.Count != 7 || d.Sum != 10 {
		t.Errorf("count %g sum %g, want 7 and 10", d.Count, d.Sum)
	}

	errCases := []struct {
		name          string
		before, after Histogram
		want          error
	}{
		{"reset", after, before, ErrReset},
		{"other bounds", before, hist([]float64{1, 3, inf}, []float64{4, 6, 10}), ErrBucketsDiffer},
		{"other bucket count", before, hist([]float64{1, inf}, []float64{4, 10}), ErrBucketsDiffer},
	}
	for _, tc := range errCases {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Delta(tc.before, tc.after); !errors.Is(err, tc.want) {
				t.Errorf("Delta: %v, want %v", err, tc.want)
			}
		})
	}
}

func TestDiskHistogram(t *testing.T) {
	// 50 in (4, 8] ms and 50 in (8, 16] ms: p99 = 8 + 8*49/50 ms.
	h := DiskHistogram(0, 0, 0, 50, 50)
	if h.Count != 100 || len(h.Buckets) != 15 || h.Buckets[13].UpperBound != 8.192 {
		t.Fatalf("histogram %+v", h)
	}
	if q := Quantile(0.99, h); q < 0.01583 || q > 0.01585 {
		t.Errorf("p99 %v, want 15.84 ms", q)
	}
}

package cmp

import (
	"math"
	"slices"
	"testing"
	"time"
)

func TestMedian(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		name string
		in   []float64
		want float64
	}{
		{"odd", []float64{3, 1, 2}, 2},
		{"even takes the mean of the middle two", []float64{4, 1, 3, 2}, 2.5},
		{"one", []float64{7}, 7},
		{"NaNs left out", []float64{nan, 5, 1, nan, 3}, 3},
		{"empty", nil, nan},
		{"only NaN", []float64{nan}, nan},
		{"outlier does not move it", []float64{1, 1.02, 0.98, 50, 1.01}, 1.01},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := slices.Clone(tc.in)
			got := Median(in)
			if math.IsNaN(tc.want) != math.IsNaN(got) || (!math.IsNaN(got) && got != tc.want) {
				t.Fatalf("Median(%v) = %v, want %v", tc.in, got, tc.want)
			}
			if !slices.EqualFunc(in, tc.in, func(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) }) {
				t.Fatalf("Median changed its input: %v, was %v", in, tc.in)
			}
		})
	}
	if got := MedianDur([]time.Duration{3, 1, 2, 10}); got != 3 { // (2+3)/2 = 2.5, rounded
		t.Errorf("MedianDur = %v, want 3ns", got)
	}
	if got := MedianDur(nil); got != 0 {
		t.Errorf("MedianDur(nil) = %v, want 0", got)
	}
}

func TestRatioAndMinMax(t *testing.T) {
	if r := Ratio(3*time.Second, 2*time.Second); r != 1.5 {
		t.Errorf("Ratio = %v, want 1.5", r)
	}
	if r := Ratio(5.0, 0); !math.IsNaN(r) {
		t.Errorf("Ratio(5, 0) = %v, want NaN", r)
	}
	lo, hi := MinMax([]float64{math.NaN(), 2, 0.5, 3})
	if lo != 0.5 || hi != 3 {
		t.Errorf("MinMax = %v, %v, want 0.5, 3", lo, hi)
	}
	if lo, hi := MinMax(nil); !math.IsNaN(lo) || !math.IsNaN(hi) {
		t.Errorf("MinMax(nil) = %v, %v, want NaN, NaN", lo, hi)
	}
}

func TestTargetMet(t *testing.T) {
	band := Target{Lo: 0.9, Hi: 1.1}
	upper := Target{Hi: 1.0}
	lower := Target{Lo: 0.95}
	tests := []struct {
		name string
		t    Target
		x    float64
		want bool
	}{
		{"inside", band, 1.0, true},
		{"lower edge", band, 0.9, true},
		{"upper edge", band, 1.1, true},
		{"below", band, 0.89, false},
		{"above", band, 1.11, false},
		{"no ratio", band, math.NaN(), false},
		{"upper bound only, far below", upper, 0.2, true},
		{"upper bound only, above", upper, 1.01, false},
		{"lower bound only, far above", lower, 3, true},
		{"lower bound only, below", lower, 0.94, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.t.Met(tc.x); got != tc.want {
				t.Errorf("Met(%v) = %v, want %v", tc.x, got, tc.want)
			}
		})
	}
}

// TestNewRow checks that the row holds the median of the per-round ratios,
// which differs from the ratio of the medians here (300/200 = 1.5).
func TestNewRow(t *testing.T) {
	fio := []float64{100, 200, 400}
	etcd := []float64{100, 300, 300}
	ratios := []float64{1, 1.5, 0.75}
	r := NewRow("m", UnitDuration, fio, etcd, ratios, &Target{Hi: 1.2})
	if r.Fio != 200 || r.Etcd != 300 || r.Ratio != 1 || r.RatioMin != 0.75 || r.RatioMax != 1.5 || !r.Met {
		t.Errorf("row = %+v, want medians 200/300, ratio 1 (0.75..1.5), met", r)
	}
	if info := NewRow("m", UnitDuration, fio, etcd, ratios, nil); info.Met || info.Target != nil {
		t.Errorf("informational row = %+v, want no target and not met", info)
	}
}

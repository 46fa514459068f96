package cmp

import (
	"math"
	"slices"
	"time"
)

// Median returns the median of xs, NaNs left out (the mean of the middle
// two for an even count), or NaN when nothing is left. xs is not changed.
func Median(xs []float64) float64 {
	s := make([]float64, 0, len(xs))
	for _, x := range xs {
		if !math.IsNaN(x) {
			s = append(s, x)
		}
	}
	if len(s) == 0 {
		return math.NaN()
	}
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// MedianDur is Median over durations, rounded to the nanosecond; 0 when
// there are none.
func MedianDur(ds []time.Duration) time.Duration {
	xs := make([]float64, len(ds))
	for i, d := range ds {
		xs[i] = float64(d)
	}
	m := Median(xs)
	if math.IsNaN(m) {
		return 0
	}
	return time.Duration(math.Round(m))
}

// Ratio returns a/b, or NaN when b is zero or either is NaN (nothing to
// compare with).
func Ratio[T ~int64 | ~float64](a, b T) float64 {
	if b == 0 {
		return math.NaN()
	}
	return float64(a) / float64(b)
}

// MinMax returns the smallest and largest of xs, NaNs left out; NaN, NaN
// when nothing is left.
func MinMax(xs []float64) (lo, hi float64) {
	lo, hi = math.NaN(), math.NaN()
	for _, x := range xs {
		if math.IsNaN(x) {
			continue
		}
		if math.IsNaN(lo) || x < lo {
			lo = x
		}
		if math.IsNaN(hi) || x > hi {
			hi = x
		}
	}
	return lo, hi
}

// Target is an acceptance band for a median ratio etcdbench/fio.
type Target struct {
	Metric string  `json:"metric"`
	Lo     float64 `json:"lo"` // <= 0: no lower bound
	Hi     float64 `json:"hi"` // <= 0: no upper bound
	Source string  `json:"source"`
}

// Met reports whether x lies in the band.
func (t Target) Met(x float64) bool {
	switch {
	case math.IsNaN(x):
		return false
	case t.Lo > 0 && x < t.Lo:
		return false
	case t.Hi > 0 && x > t.Hi:
		return false
	}
	return true
}

// Row is one line of a summary: one metric's medians over rounds.
type Row struct {
	Pair     string    `json:"pair,omitempty"` // which two runs, when a round has several pairs
	Metric   string    `json:"metric"`
	Unit     string    `json:"unit"` // one of the Unit constants
	Fio      float64   `json:"fio_median"`
	Etcd     float64   `json:"etcdbench_median"`
	Ratio    JSONFloat `json:"ratio_median"` // median of the per-round ratios
	RatioMin JSONFloat `json:"ratio_min"`
	RatioMax JSONFloat `json:"ratio_max"`
	Target   *Target   `json:"target,omitempty"` // nil: informational
	Met      bool      `json:"met"`
}

// NewRow summarizes a metric over rounds: fio and etcd hold each round's
// absolute figure of either tool, ratios each round's ratio etcdbench/fio.
// It keeps the median of each, and the range of the ratios; t (nil for an
// informational row) judges the median ratio.
func NewRow(metric, unit string, fio, etcd, ratios []float64, t *Target) Row {
	med := Median(ratios)
	lo, hi := MinMax(ratios)
	r := Row{Metric: metric, Unit: unit, Fio: Median(fio), Etcd: Median(etcd),
		Ratio: JSONFloat(med), RatioMin: JSONFloat(lo), RatioMax: JSONFloat(hi), Target: t}
	if t != nil {
		r.Met = t.Met(med)
	}
	return r
}

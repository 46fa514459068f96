package stats

import (
	"math"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// Interval is a two-sided confidence interval.
type Interval struct {
	Level float64 `json:"level"` // e.g. 0.95
	Lower float64 `json:"lower"`
	Upper float64 `json:"upper"`
}

// QuantileInterval is a confidence interval for a latency percentile.
type QuantileInterval struct {
	Level   float64 `json:"level"`
	LowerNs int64   `json:"lower_ns"`
	UpperNs int64   `json:"upper_ns"`
	// UpperOpen is true when too few samples lie above the percentile to
	// bound it from above: UpperNs is then the largest sample seen.
	UpperOpen bool `json:"upper_open,omitempty"`
}

// binomialQuantile returns the smallest k (real-valued, by the continuous
// extension) with P(Binomial(n, p) <= k) >= prob.
func binomialQuantile(prob, n, p float64) float64 {
	// P(B <= k) = I_{1-p}(n-k, k+1), increasing in k.
	cdf := func(k float64) float64 {
		if k >= n {
			return 1
		}
		return RegIncBeta(n-k, k+1, 1-p)
	}
	lo, hi := -1.0, n
	for i := 0; i < 100 && hi-lo > 1e-6; i++ {
		mid := (lo + hi) / 2
		if mid < 0 {
			mid = 0
		}
		if cdf(mid) >= prob {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}

// PercentileCI returns a distribution-free confidence interval for the
// q-quantile (0 < q < 1) of the distribution h was sampled from, treating
// the samples as nEff independent ones (nEff <= h.TotalCount(); smaller when
// the samples are autocorrelated). It uses order statistics: the number of
// samples below the true quantile is Binomial(n, q), so the ranks between its
// (1-level)/2 and (1+level)/2 quantiles bracket the true quantile.
func PercentileCI(h *hdr.Histogram, q, nEff, level float64) QuantileInterval {
	ci := QuantileInterval{Level: level}
	n := float64(h.TotalCount())
	if n == 0 || nEff <= 0 {
		return ci
	}
	if nEff > n {
		nEff = n
	}
	alpha := 1 - level
	lo := binomialQuantile(alpha/2, nEff, q) / nEff
	hi := (binomialQuantile(1-alpha/2, nEff, q) + 1) / nEff
	ci.LowerNs = h.ValueAtPercentile(100 * math.Max(lo, 0))
	if hi >= 1 {
		ci.UpperOpen = true
		hi = 1
	}
	ci.UpperNs = h.ValueAtPercentile(100 * hi)
	return ci
}

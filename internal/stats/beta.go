package stats

import "math"

// RegIncBeta returns the regularised incomplete beta function I_x(a, b) for
// a, b > 0 and 0 <= x <= 1. It is the CDF of the Beta(a, b) distribution and
// underlies the binomial bounds: P(Binomial(n, p) >= k) = I_p(k, n-k+1).
func RegIncBeta(a, b, x float64) float64 {
	switch {
	case math.IsNaN(x) || math.IsNaN(a) || math.IsNaN(b) || a <= 0 || b <= 0:
		return math.NaN()
	case x <= 0:
		return 0
	case x >= 1:
		return 1
	}
	// The continued fraction converges fast for x < (a+1)/(a+b+2); use the
	// symmetry I_x(a,b) = 1 - I_{1-x}(b,a) on the other side.
	if x > (a+1)/(a+b+2) {
		return 1 - RegIncBeta(b, a, 1-x)
	}
	lbeta := lgamma(a+b) - lgamma(a) - lgamma(b)
	front := math.Exp(a*math.Log(x) + b*math.Log1p(-x) + lbeta)
	return front * betaContinuedFraction(a, b, x) / a
}

func lgamma(x float64) float64 {
	v, _ := math.Lgamma(x)
	return v
}

// betaContinuedFraction evaluates the continued fraction of the incomplete
// beta function with the modified Lentz method.
func betaContinuedFraction(a, b, x float64) float64 {
	const (
		maxIter = 100000
		eps     = 1e-15
		tiny    = 1e-300
	)
	qab, qap, qam := a+b, a+1, a-1
	c := 1.0
	d := 1 - qab*x/qap
	if math.Abs(d) < tiny {
		d = tiny
	}
	d = 1 / d
	h := d
	// step applies one term aa of the fraction and returns the factor by
	// which it changes the value.
	step := func(aa float64) float64 {
		d = 1 + aa*d
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = 1 + aa/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		return d * c
	}
	for m := 1; m <= maxIter; m++ {
		fm := float64(m)
		m2 := 2 * fm
		h *= step(fm * (b - fm) * x / ((qam + m2) * (a + m2)))            // even term
		del := step(-(a + fm) * (qab + fm) * x / ((a + m2) * (qap + m2))) // odd term
		h *= del
		if math.Abs(del-1) < eps {
			break
		}
	}
	return h
}

// BetaQuantile returns x such that I_x(a, b) = p: the p-quantile of the
// Beta(a, b) distribution. It bisects, which is slow but monotone and exact
// to float64 precision; callers use it a few times per second at most.
func BetaQuantile(p, a, b float64) float64 {
	switch {
	case math.IsNaN(p) || a <= 0 || b <= 0:
		return math.NaN()
	case p <= 0:
		return 0
	case p >= 1:
		return 1
	}
	lo, hi := 0.0, 1.0
	for i := 0; i < 200 && hi-lo > 1e-17; i++ {
		mid := (lo + hi) / 2
		if mid == lo || mid == hi {
			break
		}
		if RegIncBeta(a, b, mid) < p {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

// UpperBound returns the exact (Clopper-Pearson) one-sided upper confidence
// bound, at the given confidence level, on the probability of an event seen
// k times in n independent trials. k and n may be fractional (an effective
// sample size after a correction for autocorrelation).
func UpperBound(k, n, level float64) float64 {
	if n <= 0 || k >= n {
		return 1
	}
	if k < 0 {
		k = 0
	}
	return BetaQuantile(level, k+1, n-k)
}

// LowerBound returns the exact (Clopper-Pearson) one-sided lower confidence
// bound, at the given confidence level, on the probability of an event seen
// k times in n independent trials.
func LowerBound(k, n, level float64) float64 {
	if n <= 0 || k <= 0 {
		return 0
	}
	if k > n {
		k = n
	}
	return BetaQuantile(1-level, k, n-k+1)
}

package stats

// Batch is the count of samples and of threshold exceedances in one slice of
// time (one second in etcdbench).
type Batch struct {
	N int64 // samples
	K int64 // samples above the threshold
}

// DesignEffect estimates how much autocorrelation inflates the variance of
// the exceedance fraction, by batch means: the variance of the fraction
// estimated from the per-batch counts (a ratio estimator over clusters),
// divided by the variance independent samples would give. A value of 2 means
// the N samples carry the information of N/2 independent ones. It is never
// below 1 (the correction only ever widens bounds), and it is 1 when there are
// fewer than two batches or no exceedances (nothing to estimate it from).
func DesignEffect(batches []Batch) float64 {
	var n, k float64
	m := 0
	for _, b := range batches {
		if b.N == 0 {
			continue
		}
		n += float64(b.N)
		k += float64(b.K)
		m++
	}
	if m < 2 || k == 0 || k == n {
		return 1
	}
	p := k / n
	var ss float64
	for _, b := range batches {
		if b.N == 0 {
			continue
		}
		r := float64(b.K) - p*float64(b.N)
		ss += r * r
	}
	clustered := float64(m) / float64(m-1) * ss / (n * n)
	independent := p * (1 - p) / n
	if d := clustered / independent; d > 1 {
		return d
	}
	return 1
}

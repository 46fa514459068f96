package metrics

import (
	"fmt"

	dto "github.com/prometheus/client_model/go"
)

// ValueOf returns the value of a counter, gauge or untyped metric, summed
// over all its label sets.
func ValueOf(f Families, name string) (float64, error) {
	fam, ok := f[name]
	if !ok {
		return 0, fmt.Errorf("%w: %s", ErrNoMetric, name)
	}
	var sum float64
	for _, m := range fam.GetMetric() {
		switch fam.GetType() {
		case dto.MetricType_COUNTER:
			sum += m.GetCounter().GetValue()
		case dto.MetricType_GAUGE:
			sum += m.GetGauge().GetValue()
		case dto.MetricType_UNTYPED:
			sum += m.GetUntyped().GetValue()
		default:
			return 0, fmt.Errorf("%s is a %v, not a counter or gauge", name, fam.GetType())
		}
	}
	return sum, nil
}

// HistogramDelta returns the observations of histogram name between two
// scrapes. A histogram whose label sets appear only once observed (etcd's
// apply and peer round-trip histograms) may be missing from before: it
// then counts from zero. ok is false when after lacks it or the two do
// not subtract (buckets changed, counters reset).
func HistogramDelta(before, after Families, name string) (h Histogram, ok bool) {
	a, err := HistogramOf(after, name)
	if err != nil {
		return Histogram{}, false
	}
	b, err := HistogramOf(before, name)
	if err != nil {
		return a, true
	}
	d, err := Delta(b, a)
	return d, err == nil
}

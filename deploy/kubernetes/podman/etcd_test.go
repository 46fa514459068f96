package podman

import (
	"etcdbench/internal/etcdload/metrics"
)

// value sums the samples of family name whose labels include want: a
// counter's or gauge's value, a histogram's count.
func value(f metrics.Families, name string, want map[string]string) (float64, bool) {
	fam, ok := f[name]
	if !ok {
		return 0, false
	}
	var sum float64
	found := false
	for _, m := range fam.GetMetric() {
		labels := labelsOf(m)
		match := true
		for k, v := range want {
			if labels[k] != v {
				match = false
			}
		}
		if !match {
			continue
		}
		found = true
		switch {
		case m.Counter != nil:
			sum += m.GetCounter().GetValue()
		case m.Gauge != nil:
			sum += m.GetGauge().GetValue()
		case m.Histogram != nil:
			sum += float64(m.GetHistogram().GetSampleCount())
		}
	}
	return sum, found
}

package metrics

import (
	"fmt"
	"sort"

	dto "github.com/prometheus/client_model/go"
)

// labelValue returns the value of label on m ("" when m lacks it).
func labelValue(m *dto.Metric, label string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == label {
			return l.GetValue()
		}
	}
	return ""
}

// scalar returns the value of a counter, gauge or untyped sample.
func scalar(t dto.MetricType, m *dto.Metric) (float64, bool) {
	switch t {
	case dto.MetricType_COUNTER:
		return m.GetCounter().GetValue(), true
	case dto.MetricType_GAUGE:
		return m.GetGauge().GetValue(), true
	case dto.MetricType_UNTYPED:
		return m.GetUntyped().GetValue(), true
	}
	return 0, false
}

// ValuesBy returns a counter, gauge or untyped metric summed per value of
// label, e.g. grpc_server_handled_total by "grpc_code". Series without
// the label add up under "".
func ValuesBy(f Families, name, label string) (map[string]float64, error) {
	fam, ok := f[name]
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrNoMetric, name)
	}
	out := map[string]float64{}
	for _, m := range fam.GetMetric() {
		v, ok := scalar(fam.GetType(), m)
		if !ok {
			return nil, fmt.Errorf("%s is a %v, not a counter or gauge", name, fam.GetType())
		}
		out[labelValue(m, label)] += v
	}
	return out, nil
}

// DeltaBy returns after - before of a counter per value of label. A label
// value missing from before counts from zero (etcd creates many series on
// first use); one whose value went down is left out and named in reset,
// since its process restarted between the scrapes. A metric missing from
// after gives ErrNoMetric.
func DeltaBy(before, after Families, name, label string) (d map[string]float64, reset []string, err error) {
	a, err := ValuesBy(after, name, label)
	if err != nil {
		return nil, nil, err
	}
	b, berr := ValuesBy(before, name, label)
	if berr != nil {
		b = map[string]float64{}
	}
	d = map[string]float64{}
	for k, v := range a {
		switch dv := v - b[k]; {
		case dv < 0:
			reset = append(reset, k)
		default:
			d[k] = dv
		}
	}
	sort.Strings(reset)
	return d, reset, nil
}

// HistogramsBy returns the histogram name summed per value of label, e.g.
// etcd_network_peer_round_trip_time_seconds per peer ("To").
func HistogramsBy(f Families, name, label string) (map[string]Histogram, error) {
	fam, ok := f[name]
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrNoMetric, name)
	}
	if fam.GetType() != dto.MetricType_HISTOGRAM {
		return nil, fmt.Errorf("%w: %s is a %v", ErrNotHistogram, name, fam.GetType())
	}
	out := map[string]Histogram{}
	for _, m := range fam.GetMetric() {
		k := labelValue(m, label)
		h := fromDTO(m.GetHistogram())
		if prev, ok := out[k]; ok {
			sum, err := add(prev, h, 1)
			if err != nil {
				return nil, fmt.Errorf("%s{%s=%q}: %w", name, label, k, err)
			}
			h = sum
		}
		out[k] = h
	}
	return out, nil
}

// HistogramDeltaBy returns the observations of histogram name between two
// scrapes per value of label. A label value missing from before counts
// from zero; one that does not subtract (buckets changed, counters reset)
// is left out. A metric missing from after gives ErrNoMetric.
func HistogramDeltaBy(before, after Families, name, label string) (map[string]Histogram, error) {
	a, err := HistogramsBy(after, name, label)
	if err != nil {
		return nil, err
	}
	b, berr := HistogramsBy(before, name, label)
	if berr != nil {
		b = map[string]Histogram{}
	}
	out := map[string]Histogram{}
	for k, h := range a {
		prev, ok := b[k]
		if !ok {
			out[k] = h
			continue
		}
		if d, err := Delta(prev, h); err == nil {
			out[k] = d
		}
	}
	return out, nil
}

// SummaryCount returns the sample count and sum of a summary (such as
// go_gc_duration_seconds), added up over its label sets.
func SummaryCount(f Families, name string) (count, sum float64, err error) {
	fam, ok := f[name]
	if !ok {
		return 0, 0, fmt.Errorf("%w: %s", ErrNoMetric, name)
	}
	if fam.GetType() != dto.MetricType_SUMMARY {
		return 0, 0, fmt.Errorf("%s is a %v, not a summary", name, fam.GetType())
	}
	for _, m := range fam.GetMetric() {
		count += float64(m.GetSummary().GetSampleCount())
		sum += m.GetSummary().GetSampleSum()
	}
	return count, sum, nil
}

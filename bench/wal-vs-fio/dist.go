package main

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"

	"etcdbench/internal/result"
	"etcdbench/internal/stats"
)

// dist is one run's whole fdatasync latency distribution: the values its
// histogram holds samples at (ns, ascending) and how many at each. fio's
// values are its json+ bins (each bin's midpoint, within 0.8 % of the
// samples in it); etcdbench's are its HdrHistogram's buckets, each given
// as its highest equivalent value (within 0.1 %), which is the value hdr
// reports a percentile at.
type dist struct {
	Values []int64
	Counts []int64
}

// N is how many samples d holds.
func (d dist) N() int64 {
	var n int64
	for _, c := range d.Counts {
		n += c
	}
	return n
}

// distFromBins reads fio's json+ bins (value in ns -> count) of one or
// more jobs into one dist.
func distFromBins(bins ...map[string]int64) (dist, error) {
	sum := map[int64]int64{}
	for _, b := range bins {
		for k, c := range b {
			v, err := strconv.ParseInt(k, 10, 64)
			if err != nil || v < 0 || c < 0 {
				return dist{}, fmt.Errorf("bad fio latency bin %q: %d", k, c)
			}
			sum[v] += c
		}
	}
	return distFromMap(sum), nil
}

func distFromMap(m map[int64]int64) dist {
	var d dist
	for v := range m {
		if m[v] > 0 {
			d.Values = append(d.Values, v)
		}
	}
	slices.Sort(d.Values)
	for _, v := range d.Values {
		d.Counts = append(d.Counts, m[v])
	}
	return d
}

// errNoHistogram is returned for an etcdbench latency saved without its
// histogram (results written before the field existed).
var errNoHistogram = errors.New("etcdbench's fdatasync latency has no histogram")

// distFromLatency decodes the HdrHistogram an etcdbench latency carries.
func distFromLatency(l *result.Latency) (dist, error) {
	if l.Histogram.Data == "" {
		return dist{}, errNoHistogram
	}
	h, err := stats.Decode(l.Histogram)
	if err != nil {
		return dist{}, err
	}
	if h.TotalCount() != l.Count {
		return dist{}, fmt.Errorf("etcdbench's fdatasync histogram holds %d samples, its count says %d", h.TotalCount(), l.Count)
	}
	m := map[int64]int64{}
	for _, b := range h.Distribution() {
		if b.Count > 0 {
			m[b.To] += b.Count
		}
	}
	return distFromMap(m), nil
}

// pool is several runs' dists over the union of their values, so that a
// weighted sum of them (the runs of a bootstrap resample) costs one pass.
type pool struct {
	values []int64   // ascending, every value any run has
	counts [][]int64 // counts[run][i]: the run's samples at values[i]
}

// newPool lays ds over the union of their values.
func newPool(ds []dist) pool {
	set := map[int64]bool{}
	for _, d := range ds {
		for _, v := range d.Values {
			set[v] = true
		}
	}
	p := pool{}
	for v := range set {
		p.values = append(p.values, v)
	}
	slices.Sort(p.values)
	at := make(map[int64]int, len(p.values))
	for i, v := range p.values {
		at[v] = i
	}
	for _, d := range ds {
		c := make([]int64, len(p.values))
		for i, v := range d.Values {
			c[at[v]] += d.Counts[i]
		}
		p.counts = append(p.counts, c)
	}
	return p
}

// quantiles returns the values at percentiles ps (ascending) of the runs
// taken weight[run] times each, all their samples in one distribution,
// by HdrHistogram's rule: the smallest value with at least
// round(p/100 * n) samples at or below it (at least one). NaN without
// samples.
func (p pool) quantiles(weight []int, ps []float64) []float64 {
	out := make([]float64, len(ps))
	sum := make([]int64, len(p.values))
	var n int64
	for r, w := range weight {
		if w == 0 {
			continue
		}
		for i, c := range p.counts[r] {
			sum[i] += int64(w) * c
			n += int64(w) * c
		}
	}
	if n == 0 {
		for i := range out {
			out[i] = math.NaN()
		}
		return out
	}
	var cum int64
	j := 0
	for i, c := range sum {
		cum += c
		for j < len(ps) && cum >= rank(ps[j], n) {
			out[j] = float64(p.values[i])
			j++
		}
	}
	return out
}

// rank is the sample count a percentile needs, as hdr computes it.
func rank(p float64, n int64) int64 {
	r := int64(p/100*float64(n) + 0.5)
	return min(max(r, 1), n)
}

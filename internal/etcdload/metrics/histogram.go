package metrics

import (
	"errors"
	"fmt"
	"math"
	"sort"

	dto "github.com/prometheus/client_model/go"
)

// Sentinel errors of histogram extraction and arithmetic.
var (
	// ErrNoMetric: the scrape has no family of that name (etcd too old,
	// or not etcd).
	ErrNoMetric = errors.New("metric not found")
	// ErrNotHistogram: the family has another type.
	ErrNotHistogram = errors.New("not a histogram")
	// ErrBucketsDiffer: the two histograms have different bucket bounds.
	ErrBucketsDiffer = errors.New("histogram buckets differ")
	// ErrReset: a count went down between the scrapes, so the process
	// restarted and the delta means nothing.
	ErrReset = errors.New("counter reset between scrapes (member restarted?)")
)

// Bucket is one cumulative bucket: the number of observations less than
// or equal to UpperBound.
type Bucket struct {
	UpperBound float64
	Count      float64
}

// Histogram is a cumulative Prometheus histogram. Buckets are in
// ascending order of UpperBound and end with +Inf (whose count is Count).
type Histogram struct {
	Buckets []Bucket
	Count   float64
	Sum     float64
}

// HistogramOf returns the histogram name, summed over all its label sets
// (etcd's disk histograms have none).
func HistogramOf(f Families, name string) (Histogram, error) {
	fam, ok := f[name]
	if !ok {
		return Histogram{}, fmt.Errorf("%w: %s", ErrNoMetric, name)
	}
	if fam.GetType() != dto.MetricType_HISTOGRAM {
		return Histogram{}, fmt.Errorf("%w: %s is a %v", ErrNotHistogram, name, fam.GetType())
	}
	var sum Histogram
	for i, m := range fam.GetMetric() {
		h := fromDTO(m.GetHistogram())
		if i == 0 {
			sum = h
			continue
		}
		var err error
		if sum, err = add(sum, h, 1); err != nil {
			return Histogram{}, fmt.Errorf("%s: %w", name, err)
		}
	}
	return sum, nil
}

// fromDTO converts a client_model histogram, adding the +Inf bucket that
// the text format implies by _count when the parser left it out.
func fromDTO(d *dto.Histogram) Histogram {
	h := Histogram{Count: float64(d.GetSampleCount()), Sum: d.GetSampleSum()}
	for _, b := range d.GetBucket() {
		h.Buckets = append(h.Buckets, Bucket{UpperBound: b.GetUpperBound(), Count: float64(b.GetCumulativeCount())})
	}
	sort.SliceStable(h.Buckets, func(i, j int) bool { return h.Buckets[i].UpperBound < h.Buckets[j].UpperBound })
	if n := len(h.Buckets); n == 0 || !math.IsInf(h.Buckets[n-1].UpperBound, 1) {
		h.Buckets = append(h.Buckets, Bucket{UpperBound: math.Inf(1), Count: h.Count})
	}
	return h
}

// Delta returns after - before: the observations made between two
// scrapes of the same histogram.
func Delta(before, after Histogram) (Histogram, error) {
	d, err := add(after, before, -1)
	if err != nil {
		return Histogram{}, err
	}
	if d.Count < 0 {
		return Histogram{}, ErrReset
	}
	for _, b := range d.Buckets {
		if b.Count < 0 {
			return Histogram{}, ErrReset
		}
	}
	return d, nil
}

// add returns a + sign*b for histograms with the same bounds.
func add(a, b Histogram, sign float64) (Histogram, error) {
	if len(a.Buckets) != len(b.Buckets) {
		return Histogram{}, fmt.Errorf("%w: %d and %d buckets", ErrBucketsDiffer, len(a.Buckets), len(b.Buckets))
	}
	out := Histogram{Count: a.Count + sign*b.Count, Sum: a.Sum + sign*b.Sum, Buckets: make([]Bucket, len(a.Buckets))}
	for i := range a.Buckets {
		if a.Buckets[i].UpperBound != b.Buckets[i].UpperBound {
			return Histogram{}, fmt.Errorf("%w: bucket %d is le=%g and le=%g", ErrBucketsDiffer, i, a.Buckets[i].UpperBound, b.Buckets[i].UpperBound)
		}
		out.Buckets[i] = Bucket{UpperBound: a.Buckets[i].UpperBound, Count: a.Buckets[i].Count + sign*b.Buckets[i].Count}
	}
	return out, nil
}

// Quantile returns the q-quantile (0 <= q <= 1) of h as Prometheus'
// histogram_quantile computes it: find the bucket holding rank q*count and
// interpolate linearly between its bounds (the lowest bucket starts at 0
// unless its upper bound is not positive). A rank in the +Inf bucket gives
// the upper bound of the last finite bucket; an empty histogram, one
// without a +Inf bucket or with fewer than two buckets gives NaN; q < 0
// gives -Inf and q > 1 +Inf.
func Quantile(q float64, h Histogram) float64 {
	switch {
	case math.IsNaN(q):
		return math.NaN()
	case q < 0:
		return math.Inf(-1)
	case q > 1:
		return math.Inf(1)
	}
	b := append([]Bucket(nil), h.Buckets...)
	sort.SliceStable(b, func(i, j int) bool { return b[i].UpperBound < b[j].UpperBound })
	if len(b) == 0 || !math.IsInf(b[len(b)-1].UpperBound, 1) {
		return math.NaN()
	}
	b = coalesce(b)
	ensureMonotonic(b)
	if len(b) < 2 {
		return math.NaN()
	}
	observations := b[len(b)-1].Count
	if observations == 0 {
		return math.NaN()
	}
	rank := q * observations
	i := sort.Search(len(b)-1, func(i int) bool { return b[i].Count >= rank })
	switch {
	case i == len(b)-1:
		return b[len(b)-2].UpperBound
	case i == 0 && b[0].UpperBound <= 0:
		return b[0].UpperBound
	}
	start, end, count := 0.0, b[i].UpperBound, b[i].Count
	if i > 0 {
		start = b[i-1].UpperBound
		count -= b[i-1].Count
		rank -= b[i-1].Count
	}
	return start + (end-start)*(rank/count)
}

// coalesce merges buckets with the same upper bound, as Prometheus does.
func coalesce(b []Bucket) []Bucket {
	out := b[:0]
	for _, x := range b {
		if n := len(out); n > 0 && out[n-1].UpperBound == x.UpperBound {
			out[n-1].Count += x.Count
			continue
		}
		out = append(out, x)
	}
	return out
}

// ensureMonotonic raises any count that is below its predecessor, as
// Prometheus does for scrapes that raced with observations.
func ensureMonotonic(b []Bucket) {
	m := math.Inf(-1)
	for i := range b {
		if b[i].Count > m {
			m = b[i].Count
		} else {
			b[i].Count = m
		}
	}
}

// DiskBuckets is the number of finite buckets of etcd's disk histograms.
const DiskBuckets = 14

// DiskBucketBound is the upper bound, in seconds, of finite bucket i of
// etcd's disk histograms (server/storage/backend/metrics.go and
// server/storage/wal/metrics.go: prometheus.ExponentialBuckets(0.001, 2, 14)).
func DiskBucketBound(i int) float64 { return 0.001 * math.Pow(2, float64(i)) }

// DiskBucketBelow is the lower bound of etcd's disk bucket that holds
// limit (seconds): 8 ms for 10 ms, 16 ms for 25 ms; 0 for a limit in the
// first bucket or beyond the last.
func DiskBucketBelow(limit float64) float64 {
	for i := 1; i < DiskBuckets; i++ {
		if limit <= DiskBucketBound(i) && limit > DiskBucketBound(i-1) {
			return DiskBucketBound(i - 1)
		}
	}
	return 0
}

// DiskHistogram builds a histogram on etcd's disk buckets (its WAL fsync
// and backend commit histograms: ExponentialBuckets(0.001, 2, 14), 1 ms
// to 8.192 s) from per-bucket, not cumulative, counts of the first
// buckets: what a member's delta looks like, for tests and models.
func DiskHistogram(perBucket ...float64) Histogram {
	var h Histogram
	var cum float64
	for i := range DiskBuckets {
		if i < len(perBucket) {
			cum += perBucket[i]
		}
		h.Buckets = append(h.Buckets, Bucket{UpperBound: DiskBucketBound(i), Count: cum})
	}
	h.Buckets = append(h.Buckets, Bucket{UpperBound: math.Inf(1), Count: cum})
	h.Count = cum
	return h
}

// WithFast returns h with n more observations in its lowest bucket: what
// its quantiles would be if the observations still to come were all
// fast. A p99 that stays over a limit even so is over it for good.
func WithFast(h Histogram, n float64) Histogram {
	out := Histogram{Count: h.Count + n, Sum: h.Sum, Buckets: make([]Bucket, len(h.Buckets))}
	for i, b := range h.Buckets {
		out.Buckets[i] = Bucket{UpperBound: b.UpperBound, Count: b.Count + n}
	}
	return out
}

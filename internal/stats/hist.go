package stats

import (
	"encoding/base64"
	"errors"
	"fmt"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// Histogram geometry for latencies in nanoseconds: 1 ns to 1 hour with three
// significant digits, i.e. a relative error of at most 0.1 %, in about 200 KiB
// whatever the number of samples.
const (
	lowestNs      = 1
	highestNs     = int64(time.Hour)
	sigFigs       = 3
	coarseSigFigs = 2 // per-second histograms: 1 % error is plenty for a time series
)

// HistogramEncoding names the encoding of EncodedHistogram.Data.
const HistogramEncoding = "hdrhistogram-v2-deflate-base64"

// NewLatencyHistogram returns an empty histogram for latencies in nanoseconds.
func NewLatencyHistogram() *hdr.Histogram { return hdr.New(lowestNs, highestNs, sigFigs) }

// newCoarseHistogram returns a smaller histogram for one second of samples.
func newCoarseHistogram() *hdr.Histogram { return hdr.New(lowestNs, highestNs, coarseSigFigs) }

// Record adds one latency, clamping values beyond the histogram's range
// (over an hour) to its top rather than losing them.
func Record(h *hdr.Histogram, d time.Duration) {
	v := int64(d)
	if v < lowestNs {
		v = lowestNs
	} else if v > highestNs {
		v = highestNs
	}
	_ = h.RecordValue(v) // cannot fail: v is in range
}

// Percentile is one point of a latency distribution.
type Percentile struct {
	P       float64 `json:"p"`        // percentile, 0-100
	ValueNs int64   `json:"value_ns"` // latency at that percentile
}

// DefaultPercentiles are the percentiles every latency summary reports.
var DefaultPercentiles = []float64{50, 90, 99, 99.9}

// Summary describes a latency distribution in plain numbers.
type Summary struct {
	Count       int64        `json:"count"`
	MinNs       int64        `json:"min_ns"`
	MeanNs      float64      `json:"mean_ns"`
	StddevNs    float64      `json:"stddev_ns"`
	MaxNs       int64        `json:"max_ns"`
	Percentiles []Percentile `json:"percentiles"`
}

// Summarize reads count, extremes, moments and the DefaultPercentiles (plus
// any extra ones) from h.
func Summarize(h *hdr.Histogram, extra ...float64) Summary {
	s := Summary{Count: h.TotalCount()}
	if s.Count == 0 {
		return s
	}
	s.MinNs, s.MaxNs = h.Min(), h.Max()
	s.MeanNs, s.StddevNs = h.Mean(), h.StdDev()
	for _, p := range append(append([]float64(nil), DefaultPercentiles...), extra...) {
		s.Percentiles = append(s.Percentiles, Percentile{P: p, ValueNs: h.ValueAtPercentile(p)})
	}
	return s
}

// At returns the value at percentile p if the summary has it.
func (s Summary) At(p float64) (int64, bool) {
	for _, x := range s.Percentiles {
		if x.P == p {
			return x.ValueNs, true
		}
	}
	return 0, false
}

// EncodedHistogram is a lossless, mergeable copy of a histogram inside a
// result, so that reports and comparisons can be recomputed from saved JSON.
type EncodedHistogram struct {
	Encoding string `json:"encoding"`
	Data     string `json:"data"`
}

// Encode packs h for a result file.
func Encode(h *hdr.Histogram) (EncodedHistogram, error) {
	b, err := h.Encode(hdr.V2CompressedEncodingCookieBase)
	if err != nil {
		return EncodedHistogram{}, fmt.Errorf("encoding histogram: %w", err)
	}
	return EncodedHistogram{Encoding: HistogramEncoding, Data: base64.StdEncoding.EncodeToString(b)}, nil
}

// ErrUnknownEncoding is returned by Decode for an encoding it cannot read.
var ErrUnknownEncoding = errors.New("unknown histogram encoding")

// Decode unpacks a histogram saved by Encode.
func Decode(e EncodedHistogram) (*hdr.Histogram, error) {
	if e.Encoding != HistogramEncoding {
		return nil, fmt.Errorf("%w %q (want %q)", ErrUnknownEncoding, e.Encoding, HistogramEncoding)
	}
	b, err := base64.StdEncoding.DecodeString(e.Data)
	if err != nil {
		return nil, fmt.Errorf("decoding histogram: %w", err)
	}
	h, err := hdr.Decode(b)
	if err != nil {
		return nil, fmt.Errorf("decoding histogram: %w", err)
	}
	return h, nil
}

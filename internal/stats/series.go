package stats

import (
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// SecondSample summarises one second of a run for time-series reports.
type SecondSample struct {
	T      int   `json:"t"`      // seconds since the start; this sample covers (T-1, T]
	Ops    int64 `json:"ops"`    // operations completed in this second
	Exceed int64 `json:"exceed"` // of those, how many were above the threshold
	P99Ns  int64 `json:"p99_ns"` // 99th percentile latency within this second
	MaxNs  int64 `json:"max_ns"` // slowest operation within this second
}

// Series accumulates per-second samples. Record is cheap enough for a hot
// loop (no allocation); Close is called once a second, off the timed path.
type Series struct {
	h       *hdr.Histogram
	ops     int64
	exceed  int64
	Samples []SecondSample
}

// NewSeries returns an empty series.
func NewSeries() *Series { return &Series{h: newCoarseHistogram()} }

// Record adds one operation's latency to the current second.
func (s *Series) Record(d time.Duration, exceeded bool) {
	Record(s.h, d)
	s.ops++
	if exceeded {
		s.exceed++
	}
}

// Close ends the current second, labelled t, appends its sample and starts a
// new second. A second with no operations is kept (a stall must show).
func (s *Series) Close(t int) SecondSample {
	smp := SecondSample{T: t, Ops: s.ops, Exceed: s.exceed}
	if s.ops > 0 {
		smp.P99Ns = s.h.ValueAtPercentile(99)
		smp.MaxNs = s.h.Max()
	}
	s.Samples = append(s.Samples, smp)
	s.h.Reset()
	s.ops, s.exceed = 0, 0
	return smp
}

// Pending reports how many operations the open second holds.
func (s *Series) Pending() int64 { return s.ops }

// Batches returns the per-second exceedance counts for DesignEffect,
// including the open second when it holds samples.
func (s *Series) Batches() []Batch {
	b := make([]Batch, 0, len(s.Samples)+1)
	for _, x := range s.Samples {
		b = append(b, Batch{N: x.Ops, K: x.Exceed})
	}
	if s.ops > 0 {
		b = append(b, Batch{N: s.ops, K: s.exceed})
	}
	return b
}

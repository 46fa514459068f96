package etcdload

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	"google.golang.org/grpc/status"

	"etcdbench/internal/stats"
)

// batchSize is how many latencies a client buffers before it records them
// in the shared histograms. A client takes the aggregator's lock once per
// batch (and at its end), never per request, and thousands of clients do
// not each hold a 270 KiB histogram.
const batchSize = 512

// maxErrorClasses bounds the distinct error classes kept; further ones are
// counted together under otherErrors.
const maxErrorClasses = 32

const otherErrors = "other (more error classes than etcdbench keeps apart)"

// sample is one completed request: its latency, the second of the run it
// completed in (1 covers (0 s, 1 s]) and its kind (an index into the
// aggregator's histograms). 16 bytes: each client's buffer is out of the
// CPU's cache when the client's turn comes, so the fewer cache lines a
// batch spans, the fewer misses per request.
type sample struct {
	ns   int64
	sec  int32
	kind int32
}

// aggregator holds the run's latency histograms - the first one for all
// requests that count towards the result's throughput and series, the
// others per kind of request - and one coarse histogram per second of the
// first. Clients hand it batches.
// requestLatency is the name of a load's latency of its successful
// requests (Outcome.Request).
const requestLatency = "request"

type aggregator struct {
	mu    sync.Mutex
	names []string
	hists []*hdr.Histogram
	// rollup records every kind in the first histogram too (a mixed load's
	// "request" is its ranges and puts together); without it the first
	// histogram is a kind of its own (a watch load's "event").
	rollup bool
	all    *hdr.Histogram   // hists[0]
	secs   []*hdr.Histogram // index sec-1
}

// newAggregator makes an aggregator with a histogram per name; kind i of
// a sample is names[i].
func newAggregator(rollup bool, names ...string) *aggregator {
	if len(names) == 0 {
		names = []string{requestLatency}
	}
	a := &aggregator{names: names, rollup: rollup}
	for range names {
		a.hists = append(a.hists, stats.NewLatencyHistogram())
	}
	a.all = a.hists[0]
	return a
}

// secondHistogram is coarse (two significant digits, 1 us to 1 h): a
// per-second p99 and maximum need no more, and a long run keeps one per
// second.
func secondHistogram() *hdr.Histogram { return hdr.New(1000, int64(time.Hour), 2) }

func (a *aggregator) add(batch []sample) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, s := range batch {
		d := time.Duration(s.ns)
		stats.Record(a.hists[s.kind], d)
		sec := int(s.sec)
		if s.kind != 0 {
			if !a.rollup {
				continue
			}
			stats.Record(a.all, d)
		}
		for len(a.secs) < sec {
			a.secs = append(a.secs, nil)
		}
		h := a.secs[sec-1]
		if h == nil {
			h = secondHistogram()
			a.secs[sec-1] = h
		}
		v := max(min(s.ns, h.HighestTrackableValue()), h.LowestTrackableValue())
		_ = h.RecordValue(v) // in range by construction
	}
}

// series returns one sample per second up to last, empty seconds
// included (a stall must show).
func (a *aggregator) series(last int) []stats.SecondSample {
	a.mu.Lock()
	defer a.mu.Unlock()
	last = max(last, len(a.secs))
	out := make([]stats.SecondSample, 0, last)
	for t := 1; t <= last; t++ {
		smp := stats.SecondSample{T: t}
		if t <= len(a.secs) && a.secs[t-1] != nil {
			h := a.secs[t-1]
			smp.Ops = h.TotalCount()
			smp.P99Ns = h.ValueAtPercentile(99)
			smp.MaxNs = h.Max()
		}
		out = append(out, smp)
	}
	return out
}

// recorder is one client's buffer of latencies and count of errors; only
// that client touches it until the run ends.
type recorder struct {
	agg   *aggregator
	start time.Time
	buf   []sample
	errs  map[string]int64
}

func newRecorder(agg *aggregator, start time.Time) *recorder {
	return &recorder{agg: agg, start: start, buf: make([]sample, 0, batchSize), errs: map[string]int64{}}
}

// record adds a request that was due at from and completed at done.
func (r *recorder) record(from, done time.Time) { r.recordKind(0, from, done) }

// recordKind adds a request of kind k (an index into the aggregator's
// histograms).
func (r *recorder) recordKind(k int, from, done time.Time) {
	// Each sample carries its second, so the buffer goes to the
	// aggregator only when full: flushing at every second's change made
	// all clients take the aggregator's lock at the same instant, once a
	// second, and 1000 clients queued behind each other there.
	sec := int32(done.Sub(r.start)/time.Second) + 1
	r.buf = append(r.buf, sample{ns: int64(done.Sub(from)), sec: sec, kind: int32(k)})
	if len(r.buf) == cap(r.buf) {
		r.flush()
	}
}

func (r *recorder) flush() {
	if len(r.buf) > 0 {
		r.agg.add(r.buf)
		r.buf = r.buf[:0]
	}
}

// fail counts a failed request by its class.
func (r *recorder) fail(err error) {
	c := errorClass(err)
	if _, ok := r.errs[c]; !ok && len(r.errs) >= maxErrorClasses {
		c = otherErrors
	}
	r.errs[c]++
}

// errorClass names an error by its gRPC code and etcd's message, e.g.
// "ResourceExhausted: etcdserver: mvcc: database space exceeded".
func errorClass(err error) string {
	var ee rpctypes.EtcdError
	switch {
	case errors.As(err, &ee):
		return fmt.Sprintf("%v: %s", ee.Code(), ee.Error())
	case errors.Is(err, context.DeadlineExceeded):
		return "DeadlineExceeded: " + context.DeadlineExceeded.Error()
	case errors.Is(err, context.Canceled):
		return "Canceled: " + context.Canceled.Error()
	}
	if s, ok := status.FromError(err); ok {
		return fmt.Sprintf("%v: %s", s.Code(), s.Message())
	}
	return "error: " + err.Error()
}

// mergeErrors adds every recorder's error counts.
func mergeErrors(rs []*recorder) map[string]int64 {
	out := map[string]int64{}
	for _, r := range rs {
		for c, n := range r.errs {
			if _, ok := out[c]; !ok && len(out) >= maxErrorClasses {
				c = otherErrors
			}
			out[c] += n
		}
	}
	return out
}

// errorNotes describes error counts, most frequent first.
func errorNotes(errs map[string]int64) []string {
	type kv struct {
		c string
		n int64
	}
	var l []kv
	for c, n := range errs {
		l = append(l, kv{c, n})
	}
	sort.Slice(l, func(i, j int) bool { return l[i].n > l[j].n || l[i].n == l[j].n && l[i].c < l[j].c })
	notes := make([]string, len(l))
	for i, x := range l {
		notes[i] = fmt.Sprintf("%d failed requests: %s", x.n, x.c)
	}
	return notes
}

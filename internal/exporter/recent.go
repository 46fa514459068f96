package exporter

import (
	"fmt"
	"sync"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"etcdbench/internal/units"
)

// recentWindow is how far back the status page's p99s look.
const recentWindow = time.Minute

// recentSyncs keeps the sync latencies of one kind of file over the last
// minute for the status page: the minute going on and the one before,
// each one histogram (bounded memory at any sync rate). The tracer's
// read goroutine records; the status page reads.
type recentSyncs struct {
	mu        sync.Mutex
	start     time.Time // of the minute going on
	cur, prev *hdr.Histogram
}

func newRecentSyncs() *recentSyncs {
	return &recentSyncs{cur: newLatencyHist(), prev: newLatencyHist()}
}

// newLatencyHist holds 1 µs .. 1 h at 2 significant digits (1 %: a
// status page's figure; about 26 KiB).
func newLatencyHist() *hdr.Histogram { return hdr.New(1000, int64(time.Hour), 2) }

// rotate starts a new minute when the one going on is over; a gap of
// more than a minute leaves nothing of before.
func (r *recentSyncs) rotate(now time.Time) {
	switch {
	case r.start.IsZero():
		r.start = now
	case now.Sub(r.start) >= 2*recentWindow:
		r.prev.Reset()
		r.cur.Reset()
		r.start = now
	case now.Sub(r.start) >= recentWindow:
		r.prev, r.cur = r.cur, r.prev
		r.cur.Reset()
		r.start = r.start.Add(recentWindow)
	}
}

func (r *recentSyncs) observe(now time.Time, d time.Duration) {
	r.mu.Lock()
	r.rotate(now)
	// A sync over an hour is left out here (the metrics keep it); one
	// under a microsecond counts as one.
	_ = r.cur.RecordValue(max(int64(d), 1000))
	r.mu.Unlock()
}

// summary says the p99 of the syncs of the last whole minute (or, in the
// first minute, of those so far) and how many there were, or "-".
func (r *recentSyncs) summary(now time.Time) string {
	if r == nil {
		return "-"
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rotate(now)
	h, what := r.prev, "last minute"
	if h.TotalCount() == 0 {
		h, what = r.cur, fmt.Sprintf("last %s", now.Sub(r.start).Round(time.Second))
	}
	if h.TotalCount() == 0 {
		return "no sync in the " + what
	}
	return fmt.Sprintf("%s (%d syncs, %s)", units.FormatDuration(time.Duration(h.ValueAtQuantile(99))), h.TotalCount(), what)
}

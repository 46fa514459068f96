package disk

import (
	"errors"
	"math"
	"strconv"
	"sync/atomic"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"etcdbench/internal/stats"
)

// MaxRate is the highest open-loop rate (entries per second) one
// etcdbench process schedules: the writer records every entry's commit
// latency between two syncs (tens of nanoseconds each), and above this
// rate that bookkeeping would take a visible share of the time between
// syncs, so the schedule would measure us instead of the disk. It is 13
// times etcdctl check perf's xl load (15,000 puts/s).
const MaxRate = 200_000

// MinRate is the lowest open-loop rate: below it a step would need
// minutes to collect the samples a p99 verdict needs.
const MinRate = 1

// ErrBadRate is matched (errors.Is) by every error about an open-loop
// rate; the error's text is the rate's message alone.
var ErrBadRate = errors.New("bad rate")

// ValidateRate checks an open-loop rate in entries per second.
func ValidateRate(rate float64) error {
	if math.IsNaN(rate) || rate < MinRate || rate > MaxRate {
		return BadSetting(ErrBadRate, "%v entries/s: want a rate from %d to %d (the most one process schedules and records)", rate, MinRate, MaxRate)
	}
	return nil
}

// ParseRate reads a rate as typed on the command line ("1500", "2.5k").
func ParseRate(s string) (float64, error) {
	t, mult := s, 1.0
	if n := len(t); n > 0 && (t[n-1] == 'k' || t[n-1] == 'K') {
		t, mult = t[:n-1], 1000
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil {
		return 0, BadSetting(ErrBadRate, "%q is not a number of entries per second (e.g. 1500 or 2.5k)", s)
	}
	v *= mult
	if err := ValidateRate(v); err != nil {
		return 0, err
	}
	return v, nil
}

// batcher hands the WAL loop its batches: how many entries the next
// write() carries, and when that write's fdatasync returned.
type batcher interface {
	// take returns the entries of the next batch, 0 when stop is set.
	take(stop *atomic.Bool) int
	// done marks the batch taken last durable at end.
	done(end time.Time)
	close()
}

// openLoop is the open-loop batcher: entry i arrives at start + i/rate
// whatever the disk does, and each batch is every entry that has arrived
// and is not yet written, as etcd's raft hands the WAL everything proposed
// since its last Save. Each entry's commit latency is measured from its
// scheduled arrival to the return of the fdatasync that made it durable,
// so a writer that falls behind shows it in the latency and the backlog
// (no coordinated omission).
type openLoop struct {
	rate     float64
	start    time.Time
	maxBatch int64

	taken, durable int64 // entries taken into batches; made durable
	batchFrom      int64 // first entry of the batch taken last
	backlogMax     int64 // most entries waiting when the writer came for them
	backlogSum     int64 // sum over takes, for the mean
	takes          int64
	commit         *hdr.Histogram
}

func newOpenLoop(rate float64, maxBatch int, start time.Time) *openLoop {
	return &openLoop{rate: rate, start: start, maxBatch: int64(max(maxBatch, 1)), commit: stats.NewLatencyHistogram()}
}

// arrival is entry i's scheduled arrival.
func (o *openLoop) arrival(i int64) time.Time {
	return o.start.Add(time.Duration(float64(i) / o.rate * 1e9))
}

// due is how many entries have arrived by now.
func (o *openLoop) due(now time.Time) int64 {
	return int64(float64(now.Sub(o.start))*o.rate/1e9) + 1
}

// maxIdleWait bounds one sleep, so a stop is seen promptly.
const maxIdleWait = 100 * time.Millisecond

func (o *openLoop) take(stop *atomic.Bool) int {
	for !stop.Load() {
		now := time.Now()
		if due := o.due(now); due > o.taken {
			waiting := due - o.taken
			o.backlogMax = max(o.backlogMax, waiting)
			o.backlogSum += waiting
			o.takes++
			n := min(waiting, o.maxBatch)
			o.batchFrom = o.taken
			o.taken += n
			return int(n)
		}
		time.Sleep(min(o.arrival(o.taken).Sub(now), maxIdleWait))
	}
	return 0
}

func (o *openLoop) done(end time.Time) {
	for i := o.batchFrom; i < o.taken; i++ {
		stats.Record(o.commit, end.Sub(o.arrival(i)))
	}
	o.durable = o.taken
}

func (o *openLoop) close() {}

// OpenLoopStats is what an open-loop WAL run measured besides the syncs.
type OpenLoopStats struct {
	Rate float64 // entries per second offered
	// Commit is each entry's latency from its scheduled arrival to the
	// return of the fdatasync that made it durable, ns.
	Commit  *hdr.Histogram
	Offered int64 // entries scheduled to arrive during the run
	Entries int64 // entries made durable
	// BacklogMax is the most entries that were waiting when the writer
	// came for the next batch; BacklogMean their mean over batches.
	BacklogMax  int64
	BacklogMean float64
	// BacklogEnd is how many scheduled entries were not durable when the
	// run ended, and LagEnd how long the oldest of them had waited: both
	// grow without bound when the disk cannot keep the rate.
	BacklogEnd int64
	LagEnd     time.Duration
}

// stats returns the figures at end, the end of the run.
func (o *openLoop) stats(end time.Time) *OpenLoopStats {
	s := &OpenLoopStats{Rate: o.rate, Commit: o.commit, Offered: o.due(end), Entries: o.durable, BacklogMax: o.backlogMax}
	if o.takes > 0 {
		s.BacklogMean = float64(o.backlogSum) / float64(o.takes)
	}
	if s.Offered > o.durable {
		s.BacklogEnd = s.Offered - o.durable
		s.LagEnd = max(end.Sub(o.arrival(o.durable)), 0)
	}
	return s
}

// maxOpenBatch is how many entries of entryBytes one open-loop write may
// carry: a second of arrivals, within 64 MiB. A backlog beyond that waits
// for the next write, as it would in etcd's bounded buffers.
func maxOpenBatch(rate float64, entryBytes int) int {
	n := int(math.Ceil(rate))
	return max(1, min(n, int(64*mib)/max(entryBytes, 1)))
}

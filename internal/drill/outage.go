// Package drill times what clients see when a member of an embedded
// three-member etcd fails: the cluster is held under a steady put load,
// one fault is injected (the leader killed, frozen or cut off from its
// peers, or its leadership moved), and each put's due time, end and
// error give the write outage, the slow and failed puts and the put
// latency before, during and after.
package drill

import (
	"slices"
	"time"

	"etcdbench/internal/stats"
)

// Request is one put as the load saw it: when it was due, when it
// returned, and whether it failed.
type Request struct {
	Due, Done time.Time
	Failed    bool
}

// late says whether r failed or took longer than limit from its due time.
func (r Request) late(limit time.Duration) bool { return r.Failed || r.Done.Sub(r.Due) > limit }

// Outage is the write outage a fault caused, as its puts show it.
type Outage struct {
	// Start is the due time of the first put that failed or took longer
	// than the limit, at or after the fault (a put due before the fault
	// that it caught counts from the fault); End the completion of the
	// first in-time put due after it. Both zero when no put was late.
	Start, End time.Time
	// LateUntil is the completion of the last late put the fault caught:
	// past End when some clients still waited (on a cut-off member, or
	// for puts forwarded to the lost leader) while others were served.
	LateUntil time.Time
	// Open says that no in-time put came after the first late one before
	// the load ended: End is the load's last completion.
	Open bool
	// Failed and Slow count the puts, due from the fault on (or caught
	// by it), that failed or returned after the limit.
	Failed, Slow int64
}

// Length is the outage's duration.
func (o Outage) Length() time.Duration { return o.End.Sub(o.Start) }

// FindOutage finds in reqs (any order) the outage of a fault injected at
// at, a put counting as late when it failed or took longer than limit
// (check perf's slowest request, 0.5 s). A put due up to limit before
// the fault is the fault's too: it was in flight when it struck.
func FindOutage(reqs []Request, at time.Time, limit time.Duration) Outage {
	rs := slices.Clone(reqs)
	slices.SortFunc(rs, func(a, b Request) int { return a.Due.Compare(b.Due) })
	var o Outage
	first := -1
	for i, r := range rs {
		if r.Due.Before(at.Add(-limit)) {
			continue
		}
		if r.Failed {
			o.Failed++
		} else if r.Done.Sub(r.Due) > limit {
			o.Slow++
		}
		if r.late(limit) {
			if first < 0 {
				first = i
			}
			if r.Done.After(o.LateUntil) {
				o.LateUntil = r.Done
			}
		}
	}
	if first < 0 {
		return o
	}
	o.Start = rs[first].Due
	if o.Start.Before(at) {
		o.Start = at
	}
	for _, r := range rs[first+1:] {
		if !r.late(limit) {
			o.End = r.Done
			return o
		}
	}
	o.Open = true
	for _, r := range rs {
		if r.Done.After(o.End) {
			o.End = r.Done
		}
	}
	return o
}

// P99 is the 99th percentile latency (from the due time) of the puts
// due in [from, to), and how many there were. A put that failed counts
// at the time its client waited for the failure: a timeout is as long.
func P99(reqs []Request, from, to time.Time) (time.Duration, int64) {
	h := stats.NewLatencyHistogram()
	for _, r := range reqs {
		if !r.Due.Before(from) && r.Due.Before(to) {
			stats.Record(h, r.Done.Sub(r.Due))
		}
	}
	return time.Duration(h.ValueAtPercentile(99)), h.TotalCount()
}

// LongestOutage is the longest write outage among the puts of reqs due
// at or after from: each run of late puts (failed, or over limit), from
// the first one's due time to the completion of the first in-time put
// after it (or the last completion, when none came). A cut-off member
// without pre-vote deposes the leader when it comes back: an outage
// after the fault's end.
func LongestOutage(reqs []Request, from time.Time, limit time.Duration) time.Duration {
	rs := slices.Clone(reqs)
	slices.SortFunc(rs, func(a, b Request) int { return a.Due.Compare(b.Due) })
	var longest time.Duration
	for i := 0; i < len(rs); i++ {
		if rs[i].Due.Before(from) || !rs[i].late(limit) {
			continue
		}
		start, end := rs[i].Due, time.Time{}
		j := i + 1
		for ; j < len(rs); j++ {
			if !rs[j].late(limit) {
				end = rs[j].Done
				break
			}
		}
		if end.IsZero() {
			for _, r := range rs {
				end = maxTime(end, r.Done)
			}
		}
		longest = max(longest, end.Sub(start))
		i = j
	}
	return longest
}

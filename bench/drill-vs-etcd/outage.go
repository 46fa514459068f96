package main

import (
	"slices"
	"time"
)

// put is one of the probe's puts: when it was due (its place in the open
// loop, not when it was sent), when it returned, and its error ("" when
// it succeeded).
type put struct {
	Due  time.Time `json:"due"`
	Done time.Time `json:"done"`
	Err  string    `json:"err,omitempty"`
}

// late says whether p failed or returned more than limit after it was
// due.
func (p put) late(limit time.Duration) bool { return p.Err != "" || p.Done.Sub(p.Due) > limit }

// outage is the write outage the probe saw around a fault.
type outage struct {
	// Start is the due time of the first late put due at or after the
	// fault, or the fault itself when that put was due up to the limit
	// before it and still in flight when it struck; End is the completion
	// of the first in-time put due after that put. Both are zero when no
	// put was late.
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
	// Open says no in-time put followed: End is the last completion.
	Open bool `json:"open,omitempty"`
	// LateUntil is the completion of the last late put of the fault: past
	// End while some puts still waited (at the cut-off member, or for a
	// proposal the lost leader never answered) as others were served.
	LateUntil time.Time `json:"late_until"`
	// Failed and Slow count the fault's puts (due from the fault on, or
	// in flight when it struck) that failed, or succeeded after the limit.
	Failed int `json:"failed"`
	Slow   int `json:"slow"`
}

// Seconds is the outage's length in seconds, 0 when no put was late.
func (o outage) Seconds() float64 {
	if o.Start.IsZero() {
		return 0
	}
	return o.End.Sub(o.Start).Seconds()
}

// findOutage finds the outage of a fault struck at at in puts (any
// order): a put is late when it failed or returned more than limit after
// its due time; a put due up to limit before the fault that was still in
// flight when it struck is the fault's (it counts from the fault).
func findOutage(puts []put, at time.Time, limit time.Duration) outage {
	ps := slices.Clone(puts)
	slices.SortStableFunc(ps, func(a, b put) int { return a.Due.Compare(b.Due) })
	ours := func(p put) bool {
		if !p.Due.Before(at) {
			return true
		}
		return !p.Due.Before(at.Add(-limit)) && !p.Done.Before(at)
	}
	var o outage
	first := -1
	for i, p := range ps {
		if !ours(p) || !p.late(limit) {
			continue
		}
		if p.Err != "" {
			o.Failed++
		} else {
			o.Slow++
		}
		if first < 0 {
			first = i
		}
		if p.Done.After(o.LateUntil) {
			o.LateUntil = p.Done
		}
	}
	if first < 0 {
		return o
	}
	o.Start = ps[first].Due
	if o.Start.Before(at) {
		o.Start = at
	}
	for _, p := range ps[first+1:] {
		if p.Due.After(ps[first].Due) && !p.late(limit) {
			o.End = p.Done
			return o
		}
	}
	o.Open = true
	for _, p := range ps {
		if p.Done.After(o.End) {
			o.End = p.Done
		}
	}
	return o
}

// longestOutage is the longest outage among the puts due at or after
// from: each run of late puts (in due order) lasts from the due time of
// its first to the completion of the next in-time put (the last
// completion when none came); 0 when no put was late.
func longestOutage(puts []put, from time.Time, limit time.Duration) float64 {
	var ps []put
	for _, p := range puts {
		if !p.Due.Before(from) {
			ps = append(ps, p)
		}
	}
	slices.SortStableFunc(ps, func(a, b put) int { return a.Due.Compare(b.Due) })
	longest := 0.0
	for i := 0; i < len(ps); i++ {
		if !ps[i].late(limit) {
			continue
		}
		start := ps[i].Due
		j := i + 1
		for j < len(ps) && ps[j].late(limit) {
			j++
		}
		var end time.Time
		if j < len(ps) {
			end = ps[j].Done
		} else {
			for _, p := range ps[i:] {
				if p.Done.After(end) {
					end = p.Done
				}
			}
		}
		longest = max(longest, end.Sub(start).Seconds())
		i = j
	}
	return longest
}

package drill

import (
	"fmt"
	"math"
	"slices"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"etcdbench/internal/result"
	"etcdbench/internal/stats"
	"etcdbench/internal/units"
	"etcdbench/internal/verdict"
)

// TimelineStep is the width of a slice of a drill's timeline.
const TimelineStep = 250 * time.Millisecond

// Run turns an Outcome into the round's figures.
func (o *Outcome) Run() result.DrillRun {
	r := result.DrillRun{
		Leader: o.Leader, NewLeader: o.NewLeader, Member: o.Member,
		OutageSeconds: o.Outage.Length().Seconds(), OutageOpen: o.Outage.Open, OutageAfterEndSeconds: o.AfterEnd.Seconds(),
		NewLeaderSeconds: o.NewLeaderAfter.Seconds(), Elections: o.Terms,
		FailedRequests: o.Outage.Failed, SlowRequests: o.Outage.Slow,
		P99BeforeSeconds: o.P99Before.Seconds(), P99DuringSeconds: o.P99During.Seconds(), P99AfterSeconds: o.P99After.Seconds(),
		RestartSeconds: o.Restart.Seconds(), RestartPredictedSeconds: o.RestartPredicted.Seconds, RestartPredictedFrom: o.RestartPredicted.From,
		DefragSeconds: o.Defrag.Seconds(), CatchUpSeconds: o.CatchUp.Seconds(), DBSizeBytes: o.DBSize, Puts: int64(len(o.Requests)),
	}
	if !o.Outage.LateUntil.IsZero() {
		r.LateUntilSeconds = o.Outage.LateUntil.Sub(o.At).Seconds()
	}
	return r
}

// Timeline slices the puts into steps from the fault: per slice the puts
// due in it, those that failed, and the p99 and slowest of the others.
func Timeline(reqs []Request, at time.Time, step time.Duration) []result.DrillInterval {
	if len(reqs) == 0 {
		return nil
	}
	first, last := reqs[0].Due, reqs[0].Due
	for _, r := range reqs {
		first, last = minTime(first, r.Due), maxTime(last, r.Due)
	}
	lo := -int64((at.Sub(first) + step - 1) / step)
	hi := int64(last.Sub(at) / step)
	out := make([]result.DrillInterval, 0, hi-lo+1)
	hs := make([]*hdr.Histogram, hi-lo+1)
	for i := lo; i <= hi; i++ {
		out = append(out, result.DrillInterval{StartNs: (time.Duration(i) * step).Nanoseconds()})
	}
	for _, r := range reqs {
		d := r.Due.Sub(at)
		i := int64(d / step)
		if d < 0 && d%step != 0 {
			i--
		}
		s := &out[i-lo]
		s.Puts++
		if r.Failed {
			s.Failed++
			continue
		}
		if hs[i-lo] == nil {
			hs[i-lo] = stats.NewLatencyHistogram()
		}
		stats.Record(hs[i-lo], r.Done.Sub(r.Due))
	}
	for i, h := range hs {
		if h != nil {
			out[i].P99Ns, out[i].MaxNs = h.ValueAtPercentile(99), h.Max()
		}
	}
	return out
}

// span is the load's time: from the first put's due time to the last
// put's end.
func (o *Outcome) span() time.Duration {
	if len(o.Requests) == 0 {
		return 0
	}
	first, last := o.Requests[0].Due, o.Requests[0].Done
	for _, r := range o.Requests {
		first, last = minTime(first, r.Due), maxTime(last, r.Done)
	}
	return last.Sub(first)
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// Fault is what a fault cost over its rounds, as a result workload named
// drill-<fault>: the medians as its drill figures and figures, the
// judgements of the median round's figures, the puts of every round as
// its latency, and the first round's timeline.
func Fault(fault string, outs []*Outcome, s Setting) result.Workload {
	d := &result.Drill{Fault: fault, Rounds: len(outs), TimelineStepNs: TimelineStep.Nanoseconds()}
	med := func(f func(result.DrillRun) float64) float64 {
		var xs []float64
		for _, r := range d.Runs {
			xs = append(xs, f(r))
		}
		return stats.Median(xs)
	}
	h := stats.NewLatencyHistogram()
	for _, o := range outs {
		r := o.Run()
		d.Runs = append(d.Runs, r)
		d.OutageOpen = d.OutageOpen || r.OutageOpen
		for _, q := range o.Requests {
			if !q.Failed {
				stats.Record(h, q.Done.Sub(q.Due))
			}
		}
	}
	if len(outs) > 0 {
		d.Timeline = Timeline(outs[0].Requests, outs[0].At, TimelineStep)
	}
	d.OutageSeconds = med(func(r result.DrillRun) float64 { return r.OutageSeconds })
	d.NewLeaderSeconds = med(func(r result.DrillRun) float64 { return r.NewLeaderSeconds })
	d.OutageAfterEndSeconds = med(func(r result.DrillRun) float64 { return r.OutageAfterEndSeconds })
	d.Elections = med(func(r result.DrillRun) float64 { return float64(r.Elections) })
	d.FailedRequests = med(func(r result.DrillRun) float64 { return float64(r.FailedRequests) })
	d.SlowRequests = med(func(r result.DrillRun) float64 { return float64(r.SlowRequests) })
	d.LateUntilSeconds = med(func(r result.DrillRun) float64 { return r.LateUntilSeconds })
	d.P99BeforeSeconds = med(func(r result.DrillRun) float64 { return r.P99BeforeSeconds })
	d.P99DuringSeconds = med(func(r result.DrillRun) float64 { return r.P99DuringSeconds })
	d.P99AfterSeconds = med(func(r result.DrillRun) float64 { return r.P99AfterSeconds })
	d.RestartSeconds = med(func(r result.DrillRun) float64 { return r.RestartSeconds })
	d.RestartPredictedSeconds = med(func(r result.DrillRun) float64 { return r.RestartPredictedSeconds })
	d.CatchUpSeconds = med(func(r result.DrillRun) float64 { return r.CatchUpSeconds })
	d.DefragSeconds = med(func(r result.DrillRun) float64 { return r.DefragSeconds })
	d.DBSizeBytes = med(func(r result.DrillRun) float64 { return float64(r.DBSizeBytes) })

	w := result.Workload{
		Name: "drill-" + fault, Description: faultNamed(fault).words + ", under a steady put load",
		Parameters: s.parameters(fault),
		Stop: result.Stop{Mode: "time", Reason: fmt.Sprintf("each round: %v of load, the fault (%v for a freeze or a cut), then %v once it ended, a put at most %v",
			s.Before, s.FaultFor, s.After, s.Load.RequestTimeout)},
		Latencies: []result.Latency{latency("put", h)},
		Series:    []stats.SecondSample{},
		Drill:     d,
	}
	for _, o := range outs {
		w.Ops += int64(len(o.Requests))
		w.DurationNs += o.span().Nanoseconds()
	}
	w.Bytes = w.Ops * int64(s.Load.KeySize+s.Load.ValSize)
	if w.DurationNs > 0 {
		w.OpsPerSec = float64(w.Ops) / (float64(w.DurationNs) / 1e9)
		w.BytesPerSec = float64(w.Bytes) / (float64(w.DurationNs) / 1e9)
	}
	rounds := fmt.Sprintf(", the median of %d rounds", len(outs))
	if len(outs) == 1 {
		rounds = ""
	}
	sec := func(name string, v float64, what string) result.Figure {
		return result.Figure{Name: name, Value: v, Unit: "s", Description: what + rounds}
	}
	w.Figures = []result.Figure{
		sec("outage", d.OutageSeconds, fmt.Sprintf("write outage: from the first put that failed or took over %v to the first in time after it", SlowPut)),
		sec("outage_after_end", d.OutageAfterEndSeconds, "the longest write outage among the puts due after the fault ended"),
		sec("new_leader", d.NewLeaderSeconds, "time from the fault to another member leading (0: none did)"),
		{Name: "elections", Value: d.Elections, Unit: "count", Description: "raft terms the fault cost" + rounds},
		{Name: "failed_puts", Value: d.FailedRequests, Unit: "count", Description: fmt.Sprintf("puts the fault caught that failed (request timeout %v)", s.Load.RequestTimeout) + rounds},
		{Name: "slow_puts", Value: d.SlowRequests, Unit: "count", Description: fmt.Sprintf("puts the fault caught that took over %v", SlowPut) + rounds},
		sec("late_until", d.LateUntilSeconds, "from the fault to the end of the last late put it caught"),
		sec("put_p99_before", d.P99BeforeSeconds, "put p99 before the fault"),
		sec("put_p99_during", d.P99DuringSeconds, "put p99 from the fault to the end of the outage or of the fault"),
		sec("put_p99_after", d.P99AfterSeconds, "put p99 after"),
	}
	switch fault {
	case KillLeader:
		w.Figures = append(w.Figures, sec("restart", d.RestartSeconds, "the killed member's restart on its data, to serving clients"))
		if d.RestartPredictedSeconds > 0 {
			w.Figures = append(w.Figures, sec("restart_predicted", d.RestartPredictedSeconds, "diagnose data's prediction of that restart from the killed member's data dir, on this disk"))
			if r := d.Runs[0]; r.RestartPredictedFrom != "" {
				w.Notes = append(w.Notes, fmt.Sprintf("the restart took %.2f s, diagnose data predicted %.2f s (%.2fx) from %s",
					d.RestartSeconds, d.RestartPredictedSeconds, d.RestartSeconds/d.RestartPredictedSeconds, r.RestartPredictedFrom))
			}
		}
	case AddMember:
		w.Figures = append(w.Figures, sec("catch_up", d.CatchUpSeconds, "from the member's addition to its promotion: the leader sent it the whole db"),
			result.Figure{Name: "db_size", Value: d.DBSizeBytes, Unit: "B", Description: "the leader's db" + rounds})
	case DefragLeader, DefragMember:
		w.Figures = append(w.Figures, sec("defrag", d.DefragSeconds, "the defragmentation"),
			result.Figure{Name: "db_size", Value: d.DBSizeBytes, Unit: "B", Description: "the member's db before it" + rounds})
	}
	// The leases see writes stop, whichever stop it is.
	w.Verdicts = verdict.JudgeDrill(verdict.DrillDefaults(), verdict.DrillFigures{
		Outage:    time.Duration(max(d.OutageSeconds, d.OutageAfterEndSeconds) * float64(time.Second)),
		P99During: time.Duration(d.P99DuringSeconds * float64(time.Second)),
		NewLeader: time.Duration(d.NewLeaderSeconds * float64(time.Second)),
		Election:  s.Election(), RTT: s.Cluster.LargestRTT(),
	})
	// How sure: a median of rounds, each one drill; the range says how
	// far they spread.
	sure := fmt.Sprintf("the median of %d rounds (outage %s)", len(outs), spread(d.Runs, func(r result.DrillRun) float64 { return r.OutageSeconds }))
	if len(outs) < 3 {
		sure = fmt.Sprintf("%d round(s): one drill is one observation of a random election; --rounds 3 or more to tell the cost from chance", len(outs))
	}
	for i := range w.Verdicts {
		w.Verdicts[i].Confidence = &verdict.Confidence{Method: sure, Decided: len(outs) >= 3}
	}
	if d.OutageAfterEndSeconds > max(d.OutageSeconds, SlowPut.Seconds()) {
		w.Notes = append(w.Notes, fmt.Sprintf("writes stopped again for %.2f s after the fault had ended, longer than during it: a member that comes back with a higher term deposes the leader (etcd before 3.5 runs without --pre-vote; it prevents this)", d.OutageAfterEndSeconds))
	}
	if d.OutageOpen {
		w.Notes = append(w.Notes, "in some round writes had not come back when the load ended: the outage was at least this long")
	}
	w.Notes = append(w.Notes, s.notes(fault, d)...)
	return w
}

func latency(name string, h *hdr.Histogram) result.Latency {
	l := result.Latency{Name: name, Summary: stats.Summarize(h)}
	if enc, err := stats.Encode(h); err == nil {
		l.Histogram = enc
	}
	return l
}

// sorted returns the faults in Faults' order.
func sorted(faults []string) []string {
	out := slices.Clone(faults)
	slices.SortStableFunc(out, func(a, b string) int { return slices.Index(Faults, a) - slices.Index(Faults, b) })
	return out
}

// notes say what set the fault's cost and what would change it, one
// line each.
func (s Setting) notes(fault string, d *result.Drill) []string {
	el, rt := s.Election(), s.Load.RequestTimeout
	outage := time.Duration(d.OutageSeconds * float64(time.Second))
	newLeader := time.Duration(d.NewLeaderSeconds * float64(time.Second))
	var ns []string
	if newLeader > 0 {
		ns = append(ns, fmt.Sprintf("a new leader after %v with --election-timeout %d ms (etcd expects at most %v): it scales with the election timeout; measure a shorter one against false elections with etcdbench tune --vary election-timeout=...",
			newLeader.Round(time.Millisecond), el.Milliseconds(), verdictExpected(s).Round(time.Millisecond)))
	}
	switch {
	case fault == KillLeader && outage >= rt*4/5:
		ns = append(ns, fmt.Sprintf("the outage (%v) is the clients' %v request timeout, not the election: puts a follower had forwarded to the killed leader were lost with it and failed only at their timeout; clients with a shorter timeout that retry see about the time to a new leader",
			outage.Round(time.Millisecond), rt))
	case (fault == StopLeader || fault == PartitionLeader) && d.LateUntilSeconds > d.OutageSeconds:
		ns = append(ns, fmt.Sprintf("clients of the %s leader waited until %.1f s after the fault (its end, or their %v timeout), while the others were served again after %v",
			map[string]string{StopLeader: "frozen", PartitionLeader: "cut-off"}[fault], d.LateUntilSeconds, rt, outage.Round(time.Millisecond)))
	case fault == DefragLeader:
		ns = append(ns, fmt.Sprintf("the leader's defragmentation of %s took %.2f s, and the writes of its clients waited for it (outage %v): move the leader off a member before defragmenting it (a hand-over costs less: see move-leader), as etcd-defrag does",
			units.FormatBytes(int64(d.DBSizeBytes)), d.DefragSeconds, outage.Round(time.Millisecond)))
	case fault == DefragMember:
		ns = append(ns, fmt.Sprintf("the defragmentation of %s took %.2f s; its own clients' requests waited for it (late until %.1f s after it began), the others' did not", units.FormatBytes(int64(d.DBSizeBytes)), d.DefragSeconds, d.LateUntilSeconds))
	case fault == SlowFollower:
		ns = append(ns, fmt.Sprintf("with every sync of a follower's disk %v slower, the leader committed with the other follower: the put p99 was %.0f ms during the fault against %.0f ms before; the slow member's own clients waited for its applies (late until %.1f s): give each member a disk of its own", s.SyncDelay, d.P99DuringSeconds*1000, d.P99BeforeSeconds*1000, d.LateUntilSeconds))
	case fault == AddMember:
		ns = append(ns, fmt.Sprintf("a new member took %.2f s to catch up on a %s db before it could vote: add members as learners (etcd refuses to promote one that lags), one at a time, and expect the leader's disk and network to carry the db meanwhile", d.CatchUpSeconds, units.FormatBytes(int64(d.DBSizeBytes))))
	case fault == MoveLeader:
		ns = append(ns, fmt.Sprintf("a hand-over cost %v of writes: move the leader off a member before its maintenance (a defragmentation blocks it) instead of letting it be lost", outage.Round(time.Millisecond)))
	}
	return ns
}

func verdictExpected(s Setting) time.Duration {
	return verdict.ExpectedNewLeader(s.Election(), s.Cluster.LargestRTT())
}

// spread is the range of f over the rounds, in seconds: "0.9-1.4 s".
func spread(runs []result.DrillRun, f func(result.DrillRun) float64) string {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, r := range runs {
		lo, hi = math.Min(lo, f(r)), math.Max(hi, f(r))
	}
	return fmt.Sprintf("%.2f-%.2f s", lo, hi)
}

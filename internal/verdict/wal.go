package verdict

import (
	"fmt"
	"time"

	"etcdbench/internal/stats"
	"etcdbench/internal/units"
)

// WALFigures are the measurements of a WAL run that the verdicts read.
type WALFigures struct {
	P50, P99    time.Duration
	P99CI       stats.QuantileInterval
	Outcome     stats.Outcome // the stop rule's final decision
	Level       float64       // overall confidence of that decision
	Method      string        // how the decision was reached, for the record
	Bounds      string        // the exceedance bounds in words
	SyncIOPS    float64       // write+fdatasync cycles per second
	MemoryFS    bool          // the filesystem keeps data only in RAM
	FSType      string
	Rotational  *bool // of the device at the bottom of the storage chain; nil when unknown
	VirtualDisk bool
	// Storage are the filesystems from the directory down to the disks,
	// for the mount option rules (JudgeStorage).
	Storage StorageFigures
}

// JudgeWAL returns the verdicts of the WAL check, most important first: a
// storage rule that finds writes are not made durable comes before the
// latency verdicts it makes meaningless.
func JudgeWAL(t Thresholds, f WALFigures) []Verdict {
	storage := JudgeStorage(f.Storage)
	vs := append(storage, judgeWALP99(t, f), judgeSyncIOPS(t, f.SyncIOPS))
	return append(vs, judgeDurability(t, f, storage)...)
}

func judgeWALP99(t Thresholds, f WALFigures) Verdict {
	return JudgeQuantile(t.WALFsyncP99, t.WarnMargin, QuantileFigures{
		Value: f.P99, CI: f.P99CI, Outcome: f.Outcome, Level: f.Level, Method: f.Method, Bounds: f.Bounds, RunLonger: t.RunLonger,
	}, "etcd will log slow fdatasyncs, heartbeats will be late and leaders may change; move the data dir to faster storage (local SSD/NVMe) or stop other writers on this disk")
}

// QuantileFigures are what a latency-percentile verdict reads: the measured
// percentile, its confidence interval, and the stop rule's decision.
type QuantileFigures struct {
	Value   time.Duration
	CI      stats.QuantileInterval
	Outcome stats.Outcome // pass: decided below the limit; fail: decided above
	Level   float64
	Method  string
	Bounds  string
	// RunLonger is the command's flag for a longer run (Thresholds.RunLonger),
	// named in the advice of an undecided verdict; empty names none.
	RunLonger string
}

// runLonger is the advice to run longer, with the flag that does it when
// the command has one.
func runLonger(flag string) string {
	if flag == "" {
		return "run longer"
	}
	return "run longer (" + flag + ")"
}

// JudgeQuantile judges a latency percentile against th: FAIL when decided
// over the limit, PASS when decided under it with more than margin to spare,
// WARN in between, and for an undecided run FAIL or WARN by the measured
// value, marked as not decided. advice says what to do about a failure.
func JudgeQuantile(th, margin Threshold, f QuantileFigures, advice string) Verdict {
	limit := units.FromSeconds(th.Limit)
	v := Verdict{
		Check: th.ID, Title: th.Title, Value: f.Value.Seconds(), Unit: th.Unit,
		Limit: th.Limit, Comparison: "<", Source: th.Source,
		Confidence: &Confidence{Decided: f.Outcome != stats.Undecided, Level: f.Level, Method: f.Method, Detail: f.Bounds},
	}
	ci := fmt.Sprintf("%.0f %% CI %v..%v", 100*f.CI.Level, fmtDur(f.CI.LowerNs), fmtDur(f.CI.UpperNs))
	if f.CI.UpperOpen {
		ci += " (upper end open: too few samples above p99)"
	}
	val := f.Value.Round(time.Microsecond)
	warnAt := time.Duration((1 - margin.Limit) * float64(limit))
	if margin.Limit > 0 {
		v.WarnLimit = ptrTo(warnAt.Seconds())
	}
	switch {
	case f.Outcome == stats.Fail:
		v.Status = Fail
		v.Detail = fmt.Sprintf("p99 %v (%s) is over the %v limit: %s", val, ci, limit, advice)
	case f.Outcome == stats.Pass && f.Value < warnAt:
		v.Status = Pass
		v.Detail = fmt.Sprintf("p99 %v (%s) is well under the %v limit", val, ci, limit)
	case f.Outcome == stats.Pass:
		v.Status = Warn
		v.Detail = fmt.Sprintf("p99 %v (%s) passes but is within %.0f %% of the %v limit; other writers on this disk (backend commits, snapshots, other services) will push it over", val, ci, 100*margin.Limit, limit)
	case f.Value >= limit:
		v.Status = Fail
		v.Detail = fmt.Sprintf("p99 %v (%s) is over the %v limit, but the run ended before that was certain; %s to confirm", val, ci, limit, runLonger(f.RunLonger))
	default:
		v.Status = Warn
		v.Detail = fmt.Sprintf("p99 %v (%s) is under the %v limit, but too close to it to be sure; %s or treat this disk as borderline", val, ci, limit, runLonger(f.RunLonger))
	}
	return v
}

func judgeSyncIOPS(t Thresholds, iops float64) Verdict {
	minT, heavy := t.SyncIOPSMin, t.SyncIOPSHeavy
	v := Verdict{
		Check: minT.ID, Title: minT.Title, Value: iops, Unit: minT.Unit,
		Limit: minT.Limit, Comparison: ">=", Source: minT.Source, WarnLimit: ptrTo(heavy.Limit),
	}
	switch {
	case iops < minT.Limit:
		v.Status = Fail
		v.Detail = fmt.Sprintf("%.0f write+fdatasync per second is below the %.0f etcd needs at all", iops, minT.Limit)
	case iops < heavy.Limit:
		v.Status = Warn
		v.Detail = fmt.Sprintf("%.0f per second is enough for a light cluster but below the %.0f recommended for heavy load (%s)", iops, heavy.Limit, heavy.Source)
	default:
		v.Status = Pass
		v.Detail = fmt.Sprintf("%.0f per second meets the %.0f recommended for heavily loaded clusters", iops, heavy.Limit)
	}
	return v
}

// judgeDurability judges what the fdatasync times say about durability;
// storage are the storage rules' verdicts, which know better than any
// timing when a mount option disables flushes.
func judgeDurability(t Thresholds, f WALFigures, storage []Verdict) []Verdict {
	unflushed := false
	for _, s := range storage {
		unflushed = unflushed || IsDurabilityFailure(s)
	}
	th := t.ImplausibleSync
	v := Verdict{
		Check: th.ID, Title: th.Title, Value: f.P50.Seconds(), Unit: th.Unit,
		Limit: th.Limit, Comparison: ">=", Source: th.Source, Status: Pass,
		Detail: "fdatasync takes as long as a device write and flush can",
	}
	switch {
	case unflushed:
		v.Status = Fail
		v.Detail = fmt.Sprintf("median fdatasync %v may look like a device write, but a mount option stops it from flushing the disk's cache (%s above): the time is that of reaching a volatile cache, not stable storage", f.P50.Round(time.Microsecond/10), CheckMountFlushDisabled)
	case f.MemoryFS:
		v.Status = Warn
		v.Detail = fmt.Sprintf("%s keeps data in memory: fdatasync returns without reaching any disk, so these figures say nothing about storage; test the directory etcd will really use", f.FSType)
	case f.P50.Seconds() < th.Limit:
		v.Status = Warn
		v.Detail = fmt.Sprintf("median fdatasync %v is faster than any device can write and flush: a volatile cache (a VM disk with cache=unsafe, a RAM disk, a controller ignoring flushes) acknowledges it, so etcd's data is not durable here and the figures flatter the storage", f.P50.Round(time.Microsecond/10))
	}
	vs := []Verdict{v}
	if f.Rotational != nil && *f.Rotational && !f.VirtualDisk && !f.MemoryFS {
		r := t.RotationalSync
		rv := Verdict{
			Check: r.ID, Title: r.Title, Value: f.P50.Seconds(), Unit: r.Unit,
			Limit: r.Limit, Comparison: ">=", Source: r.Source, Status: Pass,
			Detail: "fdatasync latency is consistent with writes reaching the platter",
		}
		if f.P50.Seconds() < r.Limit {
			rv.Status = Warn
			rv.Detail = fmt.Sprintf("median fdatasync %v on a spinning disk: a write cache acknowledged the flush; fine if it is battery- or flash-backed (RAID controller with BBU), data loss on power failure if not", f.P50.Round(time.Microsecond))
		}
		vs = append(vs, rv)
	}
	return vs
}

// ptrTo is a pointer to a copy of x, for an optional figure.
func ptrTo(x float64) *float64 { return &x }

func fmtDur(ns int64) time.Duration {
	d := time.Duration(ns)
	switch {
	case d >= time.Millisecond:
		return d.Round(10 * time.Microsecond)
	case d >= time.Microsecond:
		return d.Round(time.Microsecond / 10)
	}
	return d
}

// JudgeBandwidth judges a bandwidth in bytes per second: FAIL under minT,
// WARN under rec (recommended), PASS otherwise. check and title name the
// verdict (the thresholds are shared by snapshot writes and recovery reads).
func JudgeBandwidth(minT, rec Threshold, check, title string, bw float64) Verdict {
	v := Verdict{
		Check: check, Title: title, Value: bw, Unit: minT.Unit,
		Limit: minT.Limit, Comparison: ">=", Source: minT.Source, WarnLimit: ptrTo(rec.Limit),
	}
	mb := func(x float64) string { return fmt.Sprintf("%.1f MB/s", x/1e6) }
	switch {
	case bw < minT.Limit:
		v.Status = Fail
		v.Detail = fmt.Sprintf("%s is below the %s a recovering member needs: a follower that falls behind takes minutes to catch up, and the cluster runs with one member less meanwhile", mb(bw), mb(minT.Limit))
	case bw < rec.Limit:
		v.Status = Warn
		v.Detail = fmt.Sprintf("%s is enough for small clusters but below the %s recommended for large ones (%s)", mb(bw), mb(rec.Limit), rec.Source)
	default:
		v.Status = Pass
		v.Detail = fmt.Sprintf("%s meets the %s recommended for large clusters", mb(bw), mb(rec.Limit))
	}
	return v
}

// ScheduleFigures are what an open-loop WAL run's schedule verdict reads.
type ScheduleFigures struct {
	Rate       float64       // entries per second offered
	Achieved   float64       // entries per second made durable
	BacklogEnd int64         // scheduled entries not durable at the end
	LagEnd     time.Duration // how long the oldest of them had waited
}

// JudgeSchedule judges whether an open-loop writer kept its offered rate:
// FAIL when the oldest entry still waiting at the end had waited longer
// than th, which happens only when the backlog grows.
func JudgeSchedule(th Threshold, f ScheduleFigures) Verdict {
	v := Verdict{
		Check: th.ID, Title: th.Title, Value: f.LagEnd.Seconds(), Unit: th.Unit,
		Limit: th.Limit, Comparison: "<=", Source: th.Source, Status: Pass,
		Detail: fmt.Sprintf("kept the offered %.0f entries/s: %d entries waiting at the end, the oldest for %v", f.Rate, f.BacklogEnd, f.LagEnd.Round(time.Microsecond)),
	}
	if f.LagEnd.Seconds() > th.Limit {
		v.Status = Fail
		v.Detail = fmt.Sprintf("could not keep the offered %.0f entries/s: it made %.0f/s durable and ended %d entries (%v) behind schedule, a backlog that grows as long as the rate lasts", f.Rate, f.Achieved, f.BacklogEnd, f.LagEnd.Round(time.Millisecond))
	}
	return v
}

// JudgeCapacity judges the highest write rate a capacity sweep found
// within the limits: FAIL under minT, WARN under heavy, PASS otherwise.
// decided says whether the steps that bound it were statistically
// decided; level is the sweep's overall confidence, 0 for steps of fixed
// length judged by rules (etcd capacity), which have none.
func JudgeCapacity(minT, heavy Threshold, rate float64, decided bool, level float64, criterion string) Verdict {
	method := "each step judged by its own adaptive stop rule, the confidence shared among all the steps the sweep could take (Bonferroni)"
	if level == 0 {
		method = "each step judged by its rules over its whole length, not a statistical bound"
	}
	v := Verdict{
		Check: minT.ID, Title: minT.Title, Value: rate, Unit: minT.Unit,
		Limit: minT.Limit, Comparison: ">=", Source: minT.Source, WarnLimit: ptrTo(heavy.Limit),
		Confidence: &Confidence{Decided: decided, Level: level, Method: method, Detail: criterion},
	}
	switch {
	case rate < minT.Limit:
		v.Status = Fail
		v.Detail = fmt.Sprintf("carries %.0f writes/s within the limits, under the %.0f of %s: even a light etcd will see slow syncs", rate, minT.Limit, minT.Source)
	case rate < heavy.Limit:
		v.Status = Warn
		v.Detail = fmt.Sprintf("carries %.0f writes/s within the limits: enough for a light cluster, not for the %.0f of %s", rate, heavy.Limit, heavy.Source)
	default:
		v.Status = Pass
		v.Detail = fmt.Sprintf("carries %.0f writes/s within the limits, at least the %.0f of %s", rate, heavy.Limit, heavy.Source)
	}
	return v
}

// JudgeEtcdRate judges capacity's one answer, the put rate an etcd on a
// storage and this machine is expected to carry, as JudgeCapacity judges
// a sweep's rate, with one difference: an answer under minT whose only
// evidence above it is steps that were not decided ("at least rate,
// undecided above") is a WARN, not a FAIL, since nothing failed.
func JudgeEtcdRate(minT, heavy Threshold, rate float64, undecidedAbove, decided bool, level float64, criterion string) Verdict {
	v := JudgeCapacity(minT, heavy, rate, decided, level, criterion)
	switch {
	case rate < minT.Limit && undecidedAbove:
		v.Status = Warn
		v.Detail = fmt.Sprintf("an etcd here carries at least %.0f puts/s within the limits, undecided above: the steps above it neither passed nor failed at their confidence; %s asks for %.0f", rate, minT.Source, minT.Limit)
	case v.Status == Fail:
		v.Detail = fmt.Sprintf("an etcd here carries %.0f puts/s within the limits, under the %.0f of %s: even a light etcd will see slow syncs", rate, minT.Limit, minT.Source)
	case v.Status == Warn:
		v.Detail = fmt.Sprintf("an etcd here carries %.0f puts/s within the limits: enough for a light cluster, not for the %.0f of %s", rate, heavy.Limit, heavy.Source)
	default:
		v.Detail = fmt.Sprintf("an etcd here carries %.0f puts/s within the limits, at least the %.0f of %s", rate, heavy.Limit, heavy.Source)
	}
	return v
}

// JudgeUnstable turns a capacity verdict v of rate into the verdict of
// an unstable answer when a rate above the lowest failing one, upper,
// passed too (passedAbove > 0): the rates a machine carries then depend
// on the minute, not only on the rate, and "carries rate" is its lower
// bound. A FAIL becomes a WARN, since the storage and machine carried
// passedAbove; the detail says between what bounds the answer lies, and
// why (what other processes took of the machine, when known).
func JudgeUnstable(v Verdict, rate, upper, passedAbove float64, why string) Verdict {
	if passedAbove <= 0 || upper <= 0 {
		return v
	}
	if v.Status == Fail {
		v.Status = Warn
	}
	v.Detail = fmt.Sprintf("unstable: an etcd here carried %.0f puts/s, failed at %.0f and carried %.0f above it, so what it carries lies between %.0f and %.0f puts/s and depends on the minute%s; run again, or at a quieter time, to narrow it. %s",
		rate, upper, passedAbove, rate, passedAbove, why, v.Detail)
	return v
}

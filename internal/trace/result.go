package trace

import (
	"fmt"
	"math"
	"sort"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"etcdbench/internal/result"
	"etcdbench/internal/stats"
	"etcdbench/internal/units"
	"etcdbench/internal/verdict"
	"etcdbench/internal/walfile"
)

// walSyncTitle names the trace's verdict on the WAL syncs.
const walSyncTitle = "WAL fdatasync p99 of the traced etcd"

// minSyncsForVerdict is the fewest WAL syncs whose p99 is judged: below
// it the p99 is one of the slowest few calls.
const minSyncsForVerdict = 100

// Workload turns the trace into the result record: a latency per class
// and call ("wal sync", "wal write", "db sync", ...; the WAL's syncs
// first, whose per-second series the record carries), figures of sizes
// and rates, the recommended --bs for `disk wal`, and the WAL sync p99
// judged against t.WALFsyncP99.
func (tr *Trace) Workload(t verdict.Thresholds) (result.Workload, error) {
	secs := tr.Elapsed.Seconds()
	w := result.Workload{
		Name:        "trace",
		Description: fmt.Sprintf("write, pwrite64, fdatasync and fsync of process %d on its WAL, db, snapshot and other files, timed in the kernel by eBPF syscall tracepoints", tr.PID),
		Parameters:  map[string]any{"pid": tr.PID, "duration_ns": tr.Elapsed.Nanoseconds(), "resolution": "ns, per sync (bpf_ktime_get_ns at the syscall's entry and exit); writes are counted with their size at entry, not timed"},
		Stop:        result.Stop{Mode: "time", Reason: "traced for " + tr.Elapsed.Round(time.Millisecond).String()},
		DurationNs:  tr.Elapsed.Nanoseconds(),
		Latencies:   []result.Latency{},
		Verdicts:    []verdict.Verdict{},
		Engine:      "eBPF syscall tracepoints",
	}
	if tr.Exited {
		w.Stop.Reason = "the traced process exited after " + tr.Elapsed.Round(time.Millisecond).String()
	}
	fig := func(name string, v float64, unit, desc string) {
		if !math.IsNaN(v) {
			w.Figures = append(w.Figures, result.Figure{Name: name, Value: v, Unit: unit, Description: desc})
		}
	}
	for _, c := range Classes {
		s := tr.col.classes[c]
		name := c.String()
		if s.syncs() > 0 {
			enc, err := stats.Encode(s.syncLat)
			if err != nil {
				return w, err
			}
			l := result.Latency{Name: name + " sync", Summary: stats.Summarize(s.syncLat), Histogram: enc}
			if c != ClassWAL { // the WAL's is the workload's series
				l.Series = s.series(int(math.Ceil(secs)))
			}
			w.Latencies = append(w.Latencies, l)
		}
		if s.syncs() == 0 && s.writes == 0 {
			continue
		}
		fig(name+"_fdatasyncs", float64(s.fdatasyncs), "count", "fdatasync calls on "+name+" files")
		fig(name+"_fsyncs", float64(s.fsyncs), "count", "fsync calls on "+name+" files")
		fig(name+"_writes", float64(s.writes), "count", "write and pwrite64 calls on "+name+" files")
		fig(name+"_write_bytes", float64(s.writeBytes), "B", "bytes written to "+name+" files")
		if secs > 0 {
			fig(name+"_syncs_per_sec", float64(s.syncs())/secs, "ops/s", "syncs per second on "+name+" files")
		}
		if s.writes > 0 {
			sizeFigures(fig, name+"_write_size", &s.writeSize, "B", "bytes per write to "+name+" files")
		}
		if s.bytesPerSync.Count() > 0 {
			sizeFigures(fig, name+"_bytes_per_sync", &s.bytesPerSync, "B", "bytes written to a "+name+" file between two of its syncs")
			fig(name+"_writes_per_sync_mean", s.writesPerSync.Mean(), "count", "mean writes to a "+name+" file between two of its syncs")
			fig(name+"_writes_per_sync_max", float64(s.writesPerSync.Max()), "count", "most writes to a "+name+" file between two of its syncs")
		}
		if s.failed > 0 {
			fig(name+"_failed_calls", float64(s.failed), "count", "calls on "+name+" files that returned an error")
		}
	}
	wal := tr.col.classes[ClassWAL]
	if wal.syncs() > 0 {
		extra, err := cpuWait(wal, fig)
		if err != nil {
			return w, err
		}
		// After "wal sync", which stays first.
		w.Latencies = append(w.Latencies[:1], append(extra, w.Latencies[1:]...)...)
		if n := cpuWaitNote(wal); n != "" {
			w.Notes = append(w.Notes, n)
		}
	}
	w.Ops = wal.syncs()
	w.Bytes = wal.writeBytes
	if secs > 0 {
		w.OpsPerSec, w.BytesPerSec = float64(w.Ops)/secs, float64(w.Bytes)/secs
	}
	w.Series = wal.series(int(math.Ceil(secs)))
	fig("lost_events", float64(tr.Lost), "count", "calls not recorded because the ring buffer was full (the figures undercount by this many)")
	if bs, ok := RecommendedBS(wal); ok {
		fig("recommended_bs", float64(bs), "B", "the --bs for `etcdbench disk wal` that matches this etcd: the median bytes written to the WAL between two syncs")
		w.Notes = append(w.Notes, fmt.Sprintf("a disk test that matches this etcd's WAL: etcdbench disk wal --dir <a directory on the same disk> --bs %d", bs))
	}
	w.Notes = append(w.Notes, resolutionNote)
	w.Notes = append(w.Notes, fileNotes(tr.Files)...)
	if tr.Lost > 0 {
		w.Notes = append(w.Notes, fmt.Sprintf("%d events were lost (ring buffer full): the counts are low by that many", tr.Lost))
	}
	if n := wal.syncs(); n >= minSyncsForVerdict {
		w.Verdicts = append(w.Verdicts, judgeWALSync(t, wal.syncLat, n))
	} else {
		w.Verdicts = append(w.Verdicts, tooFewSyncs(t, wal.syncLat, n, tr.Exited, tr.Elapsed))
	}
	return w, nil
}

// cpuWait returns the WAL syncs' latencies split by the scheduler: "wal
// sync cpu wait", the time each sync's thread was runnable without a CPU
// (after the disk answered, or preempted), and "wal sync without cpu
// wait", the rest - what the disk and the filesystem took, which is what a
// disk test predicts; and adds their p99 and the wait's share as figures.
func cpuWait(wal *classStats, fig func(name string, v float64, unit, desc string)) ([]result.Latency, error) {
	var out []result.Latency
	for _, l := range []struct {
		name string
		h    *hdr.Histogram
	}{{"wal sync cpu wait", wal.syncWait}, {"wal sync without cpu wait", wal.syncOwn}} {
		enc, err := stats.Encode(l.h)
		if err != nil {
			return nil, err
		}
		out = append(out, result.Latency{Name: l.name, Summary: stats.Summarize(l.h), Histogram: enc})
	}
	fig("wal_sync_cpu_wait_p99", secondsOf(wal.syncWait.ValueAtPercentile(99)), "s",
		"p99 of the time a WAL sync's thread was runnable without a CPU (scheduler tracepoints)")
	fig("wal_sync_without_cpu_wait_p99", secondsOf(wal.syncOwn.ValueAtPercentile(99)), "s",
		"p99 of the WAL syncs without their wait for a CPU: the disk's and the filesystem's own time")
	if wal.waitNs+wal.ownNs > 0 {
		fig("wal_sync_cpu_wait_share", float64(wal.waitNs)/float64(wal.waitNs+wal.ownNs), "ratio",
			"share of all WAL sync time spent waiting for a CPU")
	}
	return out, nil
}

// cpuWaitNote says how much of the WAL sync p99 was a wait for a CPU,
// when that is more than a tenth of it.
func cpuWaitNote(wal *classStats) string {
	all := wal.syncLat.ValueAtPercentile(99)
	own := wal.syncOwn.ValueAtPercentile(99)
	if all <= 0 || float64(own) > 0.9*float64(all) {
		return ""
	}
	return fmt.Sprintf("the WAL sync p99 was %v, and %v without the time its thread waited for a CPU after the disk answered: the difference is CPU contention on this machine (etcd itself or other processes), not the disk; a disk test predicts the second figure",
		time.Duration(all).Round(time.Microsecond), time.Duration(own).Round(time.Microsecond))
}

func secondsOf(ns int64) float64 { return float64(ns) / 1e9 }

// resolutionNote says how the figures were measured.
const resolutionNote = "each sync was timed in the kernel from its syscall's entry to its exit (bpf_ktime_get_ns, nanoseconds; the latency histograms keep 3 significant digits, so sub-10 µs syncs stay resolved), every call recorded, none sampled; write sizes are counted exactly, at entry"

// sizeFigures adds the smallest, median, p90, p99 and largest of an
// exact size distribution, named as diagnose wal names its own.
func sizeFigures(fig func(name string, v float64, unit, desc string), name string, s *walfile.Sizes, unit, what string) {
	fig(name+"_min", float64(s.Quantile(0)), unit, "smallest "+what)
	fig(name+"_p50", float64(s.Quantile(0.5)), unit, "median "+what)
	fig(name+"_p90", float64(s.Quantile(0.9)), unit, "p90 of "+what)
	fig(name+"_p99", float64(s.Quantile(0.99)), unit, "p99 of "+what)
	fig(name+"_max", float64(s.Max()), unit, "largest "+what)
}

// RecommendedBS is the median number of bytes etcd wrote to its WAL
// between two syncs of the same segment, rounded as diagnose wal rounds it
// (two significant digits): the block size of the one write + fdatasync
// that `disk wal` repeats. ok is false without such syncs.
func RecommendedBS(wal *classStats) (int64, bool) {
	if wal == nil || wal.bytesPerSync.Count() == 0 {
		return 0, false
	}
	return walfile.RecommendBS(wal.bytesPerSync.Quantile(0.5)), true
}

// RecommendedBS is the --bs of a `disk wal` run that matches the traced
// etcd's WAL (see the function RecommendedBS), and the WAL syncs it comes
// from.
func (tr *Trace) RecommendedBS() (bs, syncs int64, ok bool) {
	wal := tr.col.classes[ClassWAL]
	bs, ok = RecommendedBS(wal)
	return bs, wal.syncs(), ok
}

// judgeWALSync judges the traced WAL sync p99 against the WAL fdatasync
// limit: decided when the 95 % confidence interval of the p99 (order
// statistics of the traced calls) lies on one side of the limit.
func judgeWALSync(t verdict.Thresholds, h *hdr.Histogram, n int64) verdict.Verdict {
	const level = 0.95
	ci := stats.PercentileCI(h, 0.99, float64(n), level)
	limit := int64(units.FromSeconds(t.WALFsyncP99.Limit))
	f := verdict.QuantileFigures{
		Value: time.Duration(h.ValueAtPercentile(99)), CI: ci, Level: level,
		Method: "95 % confidence interval of the p99 of every traced WAL sync (order statistics)",
		Bounds: fmt.Sprintf("%d WAL syncs traced", n), Outcome: stats.Undecided, RunLonger: t.RunLonger,
	}
	switch {
	case !ci.UpperOpen && ci.UpperNs < limit:
		f.Outcome = stats.Pass
	case ci.LowerNs > limit:
		f.Outcome = stats.Fail
	}
	v := verdict.JudgeQuantile(t.WALFsyncP99, t.WarnMargin, f,
		"this etcd's WAL waits too long for the disk; move its data dir to faster storage (local SSD/NVMe) or stop other writers on that disk")
	v.Title = walSyncTitle
	return v
}

// tooFewSyncs is the verdict on a trace that saw too few WAL syncs to
// judge their p99 (an idle etcd, a short trace, a process that exited or
// is not etcd): WARN, undecided - the question was not answered, which a
// PASS would hide.
func tooFewSyncs(t verdict.Thresholds, h *hdr.Histogram, n int64, exited bool, elapsed time.Duration) verdict.Verdict {
	th := t.WALFsyncP99
	why := "trace longer, or while etcd is written to"
	if exited {
		why = "the traced process exited after " + elapsed.Round(time.Millisecond).String()
	}
	return verdict.Verdict{
		Check: th.ID, Title: walSyncTitle, Status: verdict.Warn,
		Value: secondsOf(h.ValueAtPercentile(99)), Unit: th.Unit, Limit: th.Limit, Comparison: "<", Source: th.Source,
		Confidence: &verdict.Confidence{Decided: false, Level: 0.95, Method: "none: too few syncs", Detail: fmt.Sprintf("%d WAL syncs traced", n)},
		Detail:     fmt.Sprintf("not judged: %d WAL syncs traced, fewer than the %d a p99 needs; %s", n, minSyncsForVerdict, why),
	}
}

// fileNotes lists the traced files, sorted.
func fileNotes(files map[string]Class) []string {
	var paths []string
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var out []string
	for _, p := range paths {
		out = append(out, fmt.Sprintf("traced %s file %s", files[p], p))
	}
	return out
}

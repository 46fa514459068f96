package fio

import (
	"fmt"
	"runtime"
	"strings"
	"time"

	"etcdbench/internal/result"
	"etcdbench/internal/stats"
	"etcdbench/internal/sysinfo"
	"etcdbench/internal/units"
	"etcdbench/internal/verdict"
)

// JudgeOptions are what Judge needs besides fio's output.
type JudgeOptions struct {
	Thresholds verdict.Thresholds
	Confidence float64  // e.g. 0.95
	Source     string   // where the output came from (a file name), for the record
	Args       []string // the etcdbench command line, for the record
	// WALSize is the WAL batch size fio's bs is compared with; zero:
	// DefaultWALSize.
	WALSize WALSize
}

// Judge turns fio's output into a result with one workload per reporting
// group that made sync calls, judged with the WAL check's verdicts: the
// fdatasync p99 against its threshold (decided with Clopper-Pearson bounds
// on the exceedances, at one look), the synced IOPS per writer, and whether
// the syncs can have reached a device. The notes say which of fio's options
// make the run unlike etcd's WAL.
func Judge(o *Output, opt JudgeOptions) (*result.Result, error) {
	groups, err := Groups(o)
	if err != nil {
		return nil, err
	}
	if opt.WALSize.Bytes <= 0 {
		opt.WALSize = DefaultWALSize
	}
	r := &result.Result{
		Schema: result.SchemaID,
		Tool:   result.Tool{Name: "etcdbench", Version: result.Version, GoVersion: runtime.Version(), Args: opt.Args},
	}
	if o.Timestamp > 0 {
		r.FinishedAt = time.Unix(o.Timestamp, 0).UTC()
	}
	r.Environment = environment(o, groups)
	var longest int64
	for i := range groups {
		wl, err := judgeGroup(&groups[i], len(groups) > 1, opt)
		if err != nil {
			return nil, err
		}
		longest = max(longest, wl.DurationNs)
		r.Workloads = append(r.Workloads, wl)
	}
	if !r.FinishedAt.IsZero() {
		r.StartedAt = r.FinishedAt.Add(-time.Duration(longest))
	}
	r.Finish(r.FinishedAt)
	return r, nil
}

func environment(o *Output, groups []Group) sysinfo.Facts {
	f := sysinfo.Facts{Dir: groups[0].Options["directory"]}
	if f.Dir == "" {
		f.Dir = groups[0].Options["filename"]
	}
	// fio's JSON names the host only when fio ran as a client of a fio
	// server (--client); every job then carries it.
	for _, j := range o.Jobs {
		if j.Hostname != "" {
			f.Hostname = j.Hostname
			break
		}
	}
	f.Notes = append(f.Notes, fmt.Sprintf("judged from fio's JSON output (%s); fio does not record the kernel, CPUs, memory, filesystem or device, so they are not recorded here and the checks that need them (memory filesystem, spinning disk) were not made", o.Version))
	if len(o.DiskUtil) > 0 {
		var names []string
		for _, d := range o.DiskUtil {
			names = append(names, fmt.Sprintf("%s (%.0f %% busy)", d.Name, d.Util))
		}
		f.Notes = append(f.Notes, "devices fio saw busy: "+strings.Join(names, ", "))
		if len(o.DiskUtil) == 1 {
			f.Device = &sysinfo.Device{Name: o.DiskUtil[0].Name}
		}
	}
	return f
}

func judgeGroup(g *Group, several bool, opt JudgeOptions) (result.Workload, error) {
	th := opt.Thresholds
	threshold := units.FromSeconds(th.WALFsyncP99.Limit)
	name := "fio"
	if several {
		name = fmt.Sprintf("fio-group%d-%s", g.ID, strings.Join(g.Names, "+"))
	}
	op := "fdatasync"
	if _, ok := g.Options["fdatasync"]; !ok {
		if _, ok := g.Options["fsync"]; ok {
			op = "fsync"
		}
	}
	secs := g.Elapsed.Seconds()
	writers := fmt.Sprintf("%d writer(s)", g.Writers)
	if len(g.Folded) > 0 {
		writers = fmt.Sprintf("%d writer(s), inferred", g.Writers)
	}
	wl := result.Workload{
		Name:        name,
		Description: fmt.Sprintf("fio job %s: %s, judged as etcd's WAL", strings.Join(g.Names, ", "), writers),
		Parameters: map[string]any{
			"fio_command": Command(g.Names[0], g.Options), "group": g.ID, "jobs": strings.Join(g.Names, ","),
			"writers": g.Writers, "writers_inferred": len(g.Folded) > 0, "entries": g.Entries, "threshold_ns": threshold.Nanoseconds(),
			"quantile": 0.99, "confidence": opt.Confidence, "source": opt.Source, "exact_histogram": g.Exact,
			"wal_batch_bytes": opt.WALSize.Bytes,
		},
		Ops: g.Syncs, Bytes: g.WriteBytes, DurationNs: g.Elapsed.Nanoseconds(),
		Series: []stats.SecondSample{},
	}
	if secs > 0 {
		wl.BytesPerSec = float64(g.WriteBytes) / secs
	}
	if bs, _ := BlockSize(g.Options); bs > 0 {
		wl.Parameters["block_size"] = bs
	}
	wl.OpsPerSec = g.SyncIOPS
	perWriter := g.SyncIOPSPerWriter()
	if g.Writers > 1 {
		wl.Figures = append(wl.Figures,
			result.Figure{Name: "sync_iops_per_writer", Value: perWriter, Unit: "ops/s", Description: "synced writes per second of one writer (all syncs over the writers' run times added up): what the IOPS verdict judges, since etcd has one WAL writer"})
	}

	h := g.Hist
	n := h.TotalCount()
	klo, khi := g.Exceeding(threshold.Nanoseconds())
	rule := stats.StopRule{Threshold: threshold, Quantile: 0.99, Confidence: opt.Confidence, Interval: time.Second}
	if err := rule.Validate(); err != nil {
		return wl, err
	}
	// One look at the end: the bounds use the whole confidence. The upper
	// count decides a pass, the lower count a fail, so an inexact count
	// (percentiles only) can only make the verdict less sure, never wrong.
	pass := rule.Decide(n, khi, 1, 0)
	fail := rule.Decide(n, klo, 1, 0)
	outcome := stats.Undecided
	switch {
	case pass.Outcome == stats.Pass:
		outcome = stats.Pass
	case fail.Outcome == stats.Fail:
		outcome = stats.Fail
	}
	mode, reason := "size", "fio wrote the job file's size"
	if _, ok := g.Options["time_based"]; ok {
		mode, reason = "time", "fio ran the job file's runtime"
	}
	wl.Stop = result.Stop{Mode: mode, Reason: reason, Outcome: outcome, Looks: 1}
	ci := stats.PercentileCI(h, 0.99, float64(n), opt.Confidence)
	enc, err := stats.Encode(h)
	if err != nil {
		return wl, err
	}
	frac := 0.0
	if n > 0 {
		frac = float64(khi) / float64(n)
	}
	_, _, lower, _ := stats.Bounds(n, klo, 1, 1-(1-opt.Confidence)/2)
	_, _, _, upper := stats.Bounds(n, khi, 1, 1-(1-opt.Confidence)/2)
	wl.Latencies = []result.Latency{{
		Name: op, Summary: stats.Summarize(h), P99CI: &ci, Histogram: enc,
		Exceedance: &result.Exceedance{ThresholdNs: threshold.Nanoseconds(), Count: khi, Fraction: frac,
			Interval: stats.Interval{Level: opt.Confidence, Lower: lower, Upper: upper}, DesignEffect: 1, NEff: float64(n)},
	}}
	counted := fmt.Sprintf("%d of %d above %v", khi, n, threshold)
	if klo != khi {
		counted = fmt.Sprintf("between %d and %d of %d above %v (from fio's percentiles; --output-format=json+ gives the exact count)", klo, khi, n, threshold)
	}
	method := fmt.Sprintf("exact Clopper-Pearson bounds on P(%s > %v), %s; one look at the end of fio's run; independent samples assumed (fio records no per-second counts to estimate autocorrelation from)", op, threshold, counted)
	bounds := fmt.Sprintf("P(%s > %v) is between %.3g %% and %.3g %% (%.0f %% two-sided)", op, threshold, 100*lower, 100*upper, 100*opt.Confidence)
	wl.Verdicts = verdict.JudgeWAL(th, verdict.WALFigures{
		P50: time.Duration(h.ValueAtPercentile(50)), P99: time.Duration(h.ValueAtPercentile(99)), P99CI: ci,
		Outcome: outcome, Level: opt.Confidence, Method: method, Bounds: bounds, SyncIOPS: perWriter,
	})

	wl.Notes = append(wl.Notes, "fio's run, as one command line (from the options its output records): "+Command(g.Names[0], g.Options))
	if !g.Exact {
		wl.Notes = append(wl.Notes, "latency distribution rebuilt from fio's percentiles (each sample placed at the percentile above it): exact at those points only; run fio with --output-format=json+ to give etcdbench the full histogram")
	}
	if g.Entries > 1 {
		wl.Notes = append(wl.Notes, fmt.Sprintf("merged %d job entries of group %d: latencies from all of them, IOPS of all their syncs over the longest one's time", g.Entries, g.ID))
	}
	for _, f := range g.Folded {
		wl.Notes = append(wl.Notes, fmt.Sprintf("entry %q holds %d jobs folded by group_reporting, inferred from its job_runtime (%v, the jobs' run times added up) over the longest job's run time (%v): fio's JSON does not record the count, and a job that ran for a small part of that time counts for that part; its options are those of the group's last job, under the first job's name",
			f.Name, f.Jobs, f.Runtime, f.Wall.Round(time.Millisecond)))
	}
	if n < 1000 {
		wl.Notes = append(wl.Notes, fmt.Sprintf("only %d syncs: too few to pin down a p99 (the etcd recipe, --size=22m --bs=2300, makes about 10000)", n))
	}
	for _, u := range Unlike(g, opt.WALSize) {
		wl.Notes = append(wl.Notes, "unlike etcd's WAL: "+u)
	}
	return wl, nil
}

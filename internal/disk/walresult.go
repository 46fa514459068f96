package disk

import (
	"fmt"
	"time"

	"etcdbench/internal/result"
	"etcdbench/internal/stats"
	"etcdbench/internal/sysinfo"
	"etcdbench/internal/verdict"
)

// WALDescription says what the WAL workload does, for reports.
const WALDescription = "etcd WAL appends: sequential write() of the batch then fdatasync(), on preallocated segments"

// Workload turns the run into the result model, with its verdicts judged
// against th on the machine described by env.
func (run *WALRun) Workload(th verdict.Thresholds, env sysinfo.Facts) (result.Workload, error) {
	cfg := run.Config
	rule := cfg.Rule
	w := result.Workload{
		Name:        "wal",
		Description: WALDescription,
		Parameters: map[string]any{
			"block_size":      cfg.BlockSize,
			"mode":            cfg.Mode,
			"size":            cfg.Size,
			"count":           cfg.Count,
			"runtime_ns":      cfg.Runtime.Nanoseconds(),
			"segment_bytes":   cfg.segmentBytes(),
			"threshold_ns":    rule.Threshold.Nanoseconds(),
			"quantile":        rule.Quantile,
			"confidence":      rule.Confidence,
			"min_samples":     rule.MinSamples,
			"min_duration_ns": rule.MinDuration.Nanoseconds(),
		},
		Stop: result.Stop{
			Mode: cfg.Mode, Reason: run.Reason, Outcome: run.Decision.Outcome, Looks: run.Looks,
		},
		Ops:        run.Ops,
		Bytes:      run.Bytes,
		DurationNs: run.Elapsed.Nanoseconds(),
		Series:     run.Series.Samples,
		Notes:      append([]string(nil), run.Notes...),
	}
	if secs := run.Elapsed.Seconds(); secs > 0 {
		w.OpsPerSec = float64(run.Ops) / secs
		w.BytesPerSec = float64(run.Bytes) / secs
	}
	if w.Series == nil {
		w.Series = []stats.SecondSample{}
	}

	deff := stats.DesignEffect(run.Series.Batches())
	nEff, kEff, lo, hi := stats.Bounds(run.Ops, run.Exceed, deff, 1-(1-rule.Confidence)/2)
	p99ci := stats.PercentileCI(run.Sync, rule.Quantile, nEff, rule.Confidence)
	syncEnc, err := stats.Encode(run.Sync)
	if err != nil {
		return w, err
	}
	writeEnc, err := stats.Encode(run.Write)
	if err != nil {
		return w, err
	}
	fraction := 0.0
	if run.Ops > 0 {
		fraction = float64(run.Exceed) / float64(run.Ops)
	}
	w.Latencies = []result.Latency{
		{
			Name: "fdatasync", Summary: stats.Summarize(run.Sync), P99CI: &p99ci, Histogram: syncEnc,
			Exceedance: &result.Exceedance{
				ThresholdNs: rule.Threshold.Nanoseconds(), Count: run.Exceed, Fraction: fraction,
				Interval:     stats.Interval{Level: rule.Confidence, Lower: lo, Upper: hi},
				DesignEffect: deff, NEff: nEff,
			},
		},
		{Name: "write", Summary: stats.Summarize(run.Write), Histogram: writeEnc},
	}
	if run.Cancelled || run.Ops == 0 {
		w.Verdicts = []verdict.Verdict{}
		return w, nil
	}

	looks := "one look at the end of the run"
	if cfg.Mode == ModeAdaptive {
		looks = fmt.Sprintf("up to %d looks, one a second, each at %.4g %% (Bonferroni)", rule.Looks(), 100*rule.PerLookConfidence())
	}
	var rotational *bool
	virtual := false
	if env.Device != nil {
		rotational, virtual = env.Device.Rotational, env.Device.Virtual
	}
	fig := verdict.WALFigures{
		P50:     time.Duration(run.Sync.ValueAtPercentile(50)),
		P99:     time.Duration(run.Sync.ValueAtPercentile(100 * rule.Quantile)),
		P99CI:   p99ci,
		Outcome: run.Decision.Outcome,
		Level:   rule.Confidence,
		Method: fmt.Sprintf("exact Clopper-Pearson bounds on P(fdatasync > %v) from %d samples, %d above; design effect %.2f from per-second batches (%.0f effective samples); %s",
			rule.Threshold, run.Ops, run.Exceed, deff, nEff, looks),
		Bounds:      fmt.Sprintf("P(fdatasync > %v) is between %.3g %% and %.3g %% (%.0f %% two-sided, %.1f effective exceedances)", rule.Threshold, 100*lo, 100*hi, 100*rule.Confidence, kEff),
		SyncIOPS:    w.OpsPerSec,
		MemoryFS:    sysinfo.IsMemoryFS(env.Filesystem.Type),
		FSType:      env.Filesystem.Type,
		Rotational:  rotational,
		VirtualDisk: virtual,
	}
	w.Verdicts = verdict.JudgeWAL(th, fig)
	return w, nil
}

package disk

import (
	"fmt"
	"slices"
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
			"clients":         max(cfg.Clients, 1),
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
	if cfg.Clients > 1 && run.Ops > 0 {
		w.Figures = append(w.Figures, result.Figure{Name: "entries_per_write", Value: float64(run.Bytes) / float64(run.Ops) / float64(cfg.BlockSize), Unit: "x",
			Description: fmt.Sprintf("entries of %d bytes that raft-like batching of %d concurrent clients put into each write", cfg.BlockSize, cfg.Clients)})
	}
	if w.Series == nil {
		w.Series = []stats.SecondSample{}
	}
	if cfg.Rate > 0 {
		w.Description = OpenLoopDescription
		w.Parameters["rate"] = cfg.Rate
	}

	sync, err := run.judge(syncLatency)
	if err != nil {
		return w, err
	}
	writeEnc, err := stats.Encode(run.Write)
	if err != nil {
		return w, err
	}
	w.Latencies = []result.Latency{
		sync.latency,
		{Name: "write", Summary: stats.Summarize(run.Write), Histogram: writeEnc},
	}
	if o := run.Open; o != nil {
		commit, err := latency("entry-commit", o.Commit)
		if err != nil {
			return w, err
		}
		w.Latencies = append(w.Latencies, commit)
		w.Figures = append(w.Figures, openLoopFigures(o, run, cfg.BlockSize)...)
	}
	if run.Cancelled || run.Ops == 0 {
		w.Verdicts = []verdict.Verdict{}
		return w, nil
	}
	var rotational *bool
	virtual := false
	if d, ok := env.JudgedDevice(); ok {
		rotational, virtual = d.Rotational, d.Virtual
	}
	w.Verdicts = verdict.JudgeWAL(th, verdict.WALFigures{
		P50: sync.p50, P99: sync.pq, P99CI: *sync.latency.P99CI,
		Outcome: run.Decision.Outcome, Level: rule.Confidence, Method: sync.method, Bounds: sync.bounds,
		SyncIOPS: w.OpsPerSec, MemoryFS: sysinfo.IsMemoryFS(env.Filesystem.Type), FSType: env.Filesystem.Type,
		Rotational: rotational, VirtualDisk: virtual, Storage: StorageFigures(env),
	})
	if o := run.Open; o != nil {
		// Syncs per second follow the offered rate in an open loop, so the
		// IOPS verdicts of the closed loop do not apply; keeping the
		// schedule does.
		w.Verdicts = slices.DeleteFunc(w.Verdicts, func(v verdict.Verdict) bool {
			return v.Check == th.SyncIOPSMin.ID || v.Check == th.SyncIOPSHeavy.ID
		})
		w.Verdicts = slices.Insert(w.Verdicts, 1, verdict.JudgeSchedule(th.ScheduleLag, verdict.ScheduleFigures{
			Rate: o.Rate, Achieved: o.Achieved(run.Elapsed), BacklogEnd: o.BacklogEnd, LagEnd: o.LagEnd,
		}))
	}
	return w, nil
}

// StorageFigures lists the filesystems the storage rules judge: the
// directory's own, and below a loop device each backing file's.
func StorageFigures(env sysinfo.Facts) verdict.StorageFigures {
	var f verdict.StorageFigures
	if fs := env.Filesystem; fs.Type != "" {
		f.Layers = append(f.Layers, verdict.StorageLayer{Where: "the directory's filesystem", FSType: fs.Type, Source: fs.Source, MountOptions: fs.MountOptions, SuperOptions: fs.SuperOptions})
	}
	if env.Stack != nil {
		for _, b := range env.Stack.Files {
			fs := b.Filesystem
			f.Layers = append(f.Layers, verdict.StorageLayer{Where: fmt.Sprintf("the filesystem holding %s's backing file %s", b.Loop, b.Path), FSType: fs.Type, Source: fs.Source, MountOptions: fs.MountOptions, SuperOptions: fs.SuperOptions})
		}
	}
	return f
}

// OpenLoopDescription says what an open-loop WAL run does, for reports.
const OpenLoopDescription = "etcd WAL appends at an offered rate: entries arrive on a schedule whatever the disk does, and each write() + fdatasync() carries every entry waiting, as raft batches proposals; entry latency counts from the scheduled arrival"

// Achieved is the entries per second made durable over elapsed.
func (o *OpenLoopStats) Achieved(elapsed time.Duration) float64 {
	if elapsed <= 0 {
		return 0
	}
	return float64(o.Entries) / elapsed.Seconds()
}

// openLoopFigures are the figures of an open-loop run: the rates, the
// batches and the backlog.
func openLoopFigures(o *OpenLoopStats, run *WALRun, entryBytes int) []result.Figure {
	perSync, bytesPerSync := 0.0, 0.0
	if run.Ops > 0 {
		perSync = float64(o.Entries) / float64(run.Ops)
		bytesPerSync = float64(run.Bytes) / float64(run.Ops)
	}
	syncs := 0.0
	if s := run.Elapsed.Seconds(); s > 0 {
		syncs = float64(run.Ops) / s
	}
	return []result.Figure{
		{Name: "offered_rate", Value: o.Rate, Unit: "ops/s", Description: fmt.Sprintf("entries of %d bytes scheduled to arrive per second", entryBytes)},
		{Name: "achieved_rate", Value: o.Achieved(run.Elapsed), Unit: "ops/s", Description: "entries made durable per second"},
		{Name: "syncs_per_sec", Value: syncs, Unit: "ops/s", Description: "write() + fdatasync() cycles per second"},
		{Name: "entries_per_sync", Value: perSync, Unit: "x", Description: "entries each write() + fdatasync() carried, on average"},
		{Name: "bytes_per_sync", Value: bytesPerSync, Unit: "B", Description: "bytes each write() carried, on average"},
		{Name: "backlog_max", Value: float64(o.BacklogMax), Unit: "ops", Description: "most entries waiting when the writer came for the next batch"},
		{Name: "backlog_mean", Value: o.BacklogMean, Unit: "ops", Description: "entries waiting when the writer came for a batch, on average"},
		{Name: "backlog_end", Value: float64(o.BacklogEnd), Unit: "ops", Description: "scheduled entries not yet durable when the run ended"},
		{Name: "lag_end", Value: o.LagEnd.Seconds(), Unit: "s", Description: "how long the oldest of them had waited: it grows without bound when the disk cannot keep the rate"},
	}
}

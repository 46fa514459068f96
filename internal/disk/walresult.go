package disk

import (
	"etcdbench/internal/result"
	"etcdbench/internal/stats"
	"etcdbench/internal/sysinfo"
	"etcdbench/internal/verdict"
	"fmt"
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

	sync, err := run.judge("fdatasync")
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

package disk

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"etcdbench/internal/result"
	"etcdbench/internal/stats"
	"etcdbench/internal/units"
	"etcdbench/internal/verdict"
)

// WALParams are the settings of the WAL loop in `disk all` and
// wal-under-load (`disk wal` has its own, richer flags).
type WALParams struct {
	BlockSize  int
	MinRuntime time.Duration
	MinSamples int64
	Runtime    time.Duration // cap
	Clients    int           // > 1: raft-like batching of that many clients (see WALConfig)
}

var walSpec = Spec{
	Name:        "wal",
	Description: WALDescription,
	Short:       "Time etcd's WAL appends (write + fdatasync) against the 10 ms p99",
	InAll:       true,
	Build: func(p Preset, s *Settings) (Workload, error) {
		return walWorkload{cfg: p.WAL.config(verdict.Defaults())}, nil
	},
}

// config returns the adaptive WAL loop these parameters describe, judged
// against th.
func (p WALParams) config(th verdict.Thresholds) WALConfig {
	return WALConfig{
		BlockSize: p.BlockSize, Runtime: p.Runtime, Mode: ModeAdaptive, Clients: p.Clients,
		Rule: stats.StopRule{
			Threshold: units.FromSeconds(th.WALFsyncP99.Limit), Quantile: 0.99, Confidence: 0.95,
			MinSamples: p.MinSamples, MinDuration: p.MinRuntime, Interval: time.Second,
		},
	}
}

// walWorkload adapts the WAL loop to the Workload interface.
type walWorkload struct{ cfg WALConfig }

// NewWALWorkload wraps a WAL configuration (from `disk wal`'s flags) as a
// Workload.
func NewWALWorkload(cfg WALConfig) Workload { return walWorkload{cfg: cfg} }

func (w walWorkload) SpaceNeeded() int64 { return w.cfg.SpaceNeeded() }

func (w walWorkload) Run(ctx context.Context, env Env) (result.Workload, error) {
	cfg := w.cfg
	cfg.Rule.Threshold = units.FromSeconds(env.Thresholds.WALFsyncP99.Limit)
	if env.OnSecond != nil {
		cfg.OnSecond = env.OnSecond
	}
	dir, done, err := Workdir(env.Dir, "wal")
	if err != nil {
		return result.Workload{}, err
	}
	defer done()
	m := StartMeter(env.Root, DeviceName(env))
	run, runErr := RunWAL(ctx, dir, cfg)
	if run == nil || (runErr != nil && !run.Cancelled) {
		return result.Workload{}, runErr
	}
	wl, err := run.Workload(env.Thresholds, env.Facts)
	if err != nil {
		return wl, err
	}
	wl.Process, wl.Device = m.Stop()
	if runErr == nil && !run.Cancelled && ctx.Err() == nil {
		addFlushProbe(&wl, dir)
	}
	return wl, runErr
}

// addFlushProbe runs the flush probe after the WAL loop (off its clock and
// outside its device figures) and adds its figures and note; a probe that
// cannot run is a note, not an error.
func addFlushProbe(wl *result.Workload, dir string) {
	p, err := RunFlushProbe(dir)
	if err != nil {
		wl.Notes = append(wl.Notes, fmt.Sprintf("flush probe not run: %v", err))
		return
	}
	figs, note := p.Figures()
	wl.Figures = append(wl.Figures, figs...)
	wl.Notes = append(wl.Notes, note)
}

// Workdir makes a subdirectory of the scratch directory for one workload;
// done removes it, so the next workload has the space back.
func Workdir(scratch, name string) (string, func(), error) {
	dir := filepath.Join(scratch, name)
	if err := os.Mkdir(dir, 0o700); err != nil {
		return "", nil, fmt.Errorf("creating %s: %w", dir, err)
	}
	return dir, func() { os.RemoveAll(dir) }, nil
}

// DeviceName is the kernel name of the disk under test, "" when none.
func DeviceName(env Env) string {
	if env.Facts.Device == nil {
		return ""
	}
	return env.Facts.Device.Name
}

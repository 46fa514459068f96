package diskmodel

import (
	"context"
	"time"

	"etcdbench/internal/disk"
	"etcdbench/internal/result"
	"etcdbench/internal/verdict"
)

// RunCapacityStep runs the capacity sweep's model of etcd (the open-loop
// WAL with p's entries and batch bound, and etcd's backend unless
// p.Background is "none") in dir at rate for d, and returns the step as
// the sweep records it (unjudged: its status is the WAL verdicts' only).
// bench/device-cost measures it beside a real etcd.
func RunCapacityStep(ctx context.Context, dir string, p CapacityParams, rate float64, d time.Duration) (result.CapacityStep, error) {
	w := capacityWorkload{p: p}
	cfg := w.stepConfig(verdict.Defaults(), rate, p.Confidence)
	cfg.Mode, cfg.Runtime = disk.ModeTime, d
	var be *etcdBackend
	if p.Background == "backend" {
		var err error
		if be, err = startEtcdBackend(dir, p.Shape, p.EntryBytes); err != nil {
			return result.CapacityStep{}, err
		}
		defer be.close()
		cfg.Durable = &be.durable
	}
	run, err := disk.RunWAL(ctx, dir, cfg)
	if run == nil {
		return result.CapacityStep{}, err
	}
	s, werr := stepOf(run, disk.Env{Thresholds: verdict.Defaults()})
	if err == nil {
		err = werr
	}
	s.Rate, s.MaxBatch = rate, cfg.BatchBound()
	if be != nil {
		be.takeStep().record(&s)
	}
	return s, err
}

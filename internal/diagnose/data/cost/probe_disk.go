package cost

import (
	"context"
	"fmt"
	"time"

	"etcdbench/internal/disk"
	"etcdbench/internal/sysinfo"
	"etcdbench/internal/verdict"
)

// probeBytes is the disk probes' size for a db of dbBytes.
func (l Limits) probeBytes(dbBytes int64) int64 {
	return min(max(dbBytes, l.DiskMin), l.DiskMax) &^ (1<<20 - 1)
}

// diskBandwidths runs disk's recovery (sequential read, page cache
// defeated, no random reads) and snapshot (sequential write, then
// fdatasync) workloads over size bytes in dir and returns their
// bandwidths in B/s: the read's, and the write's until durable.
func diskBandwidths(ctx context.Context, dir string, size int64) (read, write float64, err error) {
	env := disk.Env{Dir: dir, Root: "/", Facts: sysinfo.Collect("/", dir), Thresholds: verdict.Defaults()}
	p := disk.Preset{
		Recovery: disk.RecoveryParams{BlockSize: 1 << 20, Size: size, Runtime: 2 * time.Minute},
		Snapshot: disk.SeqParams{BlockSize: 1 << 20, Size: size, Runtime: 2 * time.Minute},
	}
	bw := func(name string) (float64, error) {
		spec, ok := disk.Lookup(name)
		if !ok {
			return 0, fmt.Errorf("cost: disk has no %s workload", name)
		}
		w, err := spec.Build(p, disk.NewSettings(nil))
		if err != nil {
			return 0, fmt.Errorf("cost: building disk %s: %w", name, err)
		}
		wl, err := w.Run(ctx, env)
		if err != nil {
			return 0, fmt.Errorf("cost: disk %s in %s: %w", name, dir, err)
		}
		if wl.BytesPerSec <= 0 {
			return 0, fmt.Errorf("cost: disk %s in %s measured no bandwidth", name, dir)
		}
		return wl.BytesPerSec, nil
	}
	if write, err = bw("snapshot"); err != nil {
		return 0, 0, err
	}
	if read, err = bw("recovery"); err != nil {
		return 0, 0, err
	}
	return read, write, nil
}

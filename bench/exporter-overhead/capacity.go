package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"etcdbench/bench/internal/cmp"
	"etcdbench/internal/etcdload/metrics"
	"etcdbench/internal/exporter/headroom"
)

// measureCapacity runs `etcdbench capacity --quick` on dir and saves its
// result (--json, as the Helm chart's capacity Job does) in a directory
// of its own, removed by cleanup: the exporter's --capacity file, which
// matches the etcd the rounds start in dir (the same filesystem).
func measureCapacity(ctx context.Context, etcdbench, dir string, progress io.Writer) (path string, est headroom.Estimate, cleanup func(), err error) {
	tmp, err := os.MkdirTemp("", "exporter-overhead-capacity-")
	if err != nil {
		return "", est, nil, err
	}
	cleanup = func() { _ = os.RemoveAll(tmp) }
	path = filepath.Join(tmp, "capacity.json")
	fmt.Fprintf(progress, "etcdbench capacity --quick on %s (the exporter's --capacity file) ...\n", dir)
	// Exit 1 is a FAIL verdict: the estimate is there all the same.
	if _, err = cmp.RunChild(ctx, []int{0, 1}, etcdbench, "capacity", "--quick", "--dir", dir, "--no-progress", "-o", "json", "--json", path); err == nil {
		var b []byte
		if b, err = os.ReadFile(path); err == nil {
			est, err = headroom.Parse(b)
		}
	}
	if err != nil {
		cleanup()
		return "", est, nil, fmt.Errorf("measuring the capacity file: %w", err)
	}
	return path, est, cleanup, nil
}

// servedRatio waits (up to 15 s: the exporter reads etcd's put count at
// each scan of /proc, every 5 s) until the exporter at url serves the
// member's etcdbench_capacity_used_ratio, and returns it with the put
// rate it is made of: a run whose exporter served none did not measure
// the headroom's cost, and fails.
func servedRatio(ctx context.Context, url string) (ratio, rate float64, err error) {
	deadline := time.Now().Add(15 * time.Second)
	for {
		var f metrics.Families
		if f, err = metrics.Scrape(ctx, nil, url); err == nil {
			if ratio, err = metrics.ValueOf(f, "etcdbench_capacity_used_ratio"); err == nil {
				rate, err = metrics.ValueOf(f, "etcdbench_capacity_member_puts_per_second")
				return ratio, rate, err
			}
		}
		if time.Now().After(deadline) {
			return 0, 0, errors.Join(errors.New("the exporter served no etcdbench_capacity_used_ratio (its status page says why)"), err)
		}
		select {
		case <-ctx.Done():
			return 0, 0, ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

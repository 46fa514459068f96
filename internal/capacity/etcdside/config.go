package etcdside

import (
	"fmt"
	"time"

	"etcdbench/internal/capacity/sweep"
	"etcdbench/internal/units"
	"etcdbench/internal/verdict"
)

// The ladder's defaults: `etcd capacity`'s --factor and --resolution, and
// `capacity`'s etcd side.
const (
	DefaultFactor     = 2
	DefaultResolution = 0.15
)

// sweepConfidence is the sweep's overall confidence.
const sweepConfidence = 0.95

// SweepConfig is `etcd capacity`'s sweep, built in one place for `etcd
// capacity` and for `capacity`'s etcd side: a ladder from start by factor
// (down to 10 puts/s, or start when lower) up to max, a bisection to
// resolution, steps of step judged by check perf's rules and etcd's disk
// limits (th's WAL fsync and backend commit p99), the answer compared
// with check perf's loads and the hardware guide's cluster sizes. whose
// names, in the criterion's words, the members whose histograms are
// judged ("the members'"), and where ends it (", on an embedded etcd on
// this storage", or "").
func SweepConfig(start, max, factor, resolution float64, step time.Duration, th verdict.Thresholds, whose, where string) sweep.Config {
	return sweep.Config{
		Start: start, Factor: factor, Min: min(10, start), Max: max, Resolution: resolution, Confidence: sweepConfidence,
		Unit: "puts/s", LimitNs: units.FromSeconds(th.WALFsyncP99.Limit).Nanoseconds(), Marks: sweep.CheckPerfMarks, Sizes: sweep.ClusterSizes,
		Criterion: criterion(step, th, verdict.CheckPerfDefaults(), whose, where),
	}
}

// criterion is what every step must meet, in words.
func criterion(step time.Duration, th verdict.Thresholds, cp verdict.CheckPerfThresholds, whose, where string) string {
	return fmt.Sprintf("etcdctl check perf's rules (no failed put, throughput > %.0f %% of the rate, slowest <= %g s, stddev <= %g s) and %s WAL fsync p99 < %g ms and backend commit p99 < %g ms, over %s per step%s",
		100*cp.ThroughputRatio.Limit, cp.Slowest.Limit, cp.Stddev.Limit, whose, 1000*th.WALFsyncP99.Limit, 1000*th.BackendCommitP99.Limit, step, where)
}

package search

import (
	"fmt"
	"math"
	"time"

	"etcdbench/internal/etcdload/metrics"
)

// Limits are what a real etcd's step must stay within to pass: the
// limits etcd's own docs and tuning guide give its disk histograms
// (/work/shared/ETCD-IO.md: WAL fsync p99 under 10 ms, backend commit
// p99 under 25 ms) and etcdctl check perf's rule on the rate achieved
// (over 90 % of the rate asked for).
type Limits struct {
	WALP99      time.Duration `json:"wal_fsync_p99"`
	CommitP99   time.Duration `json:"backend_commit_p99"`
	MinAchieved float64       `json:"min_achieved_fraction"`
}

// DefaultLimits are etcd's and check perf's.
var DefaultLimits = Limits{WALP99: 10 * time.Millisecond, CommitP99: 25 * time.Millisecond, MinAchieved: 0.9}

// The histograms a step reads from etcd's /metrics.
const (
	WALFsync      = "etcd_disk_wal_fsync_duration_seconds"
	BackendCommit = "etcd_disk_backend_commit_duration_seconds"
)

// NoneObserved is the p99 of a histogram that observed nothing over a
// step: above every limit.
const NoneObserved = time.Duration(math.MaxInt64)

// Step is what the limits judge of one fixed-rate step.
type Step struct {
	Offered, Achieved float64
	Errors            int64
	// Broken says why the load generator's report is missing or
	// incomplete ("" when it is whole).
	Broken string
	// WALP99 and CommitP99 are etcd's own over the step (NoneObserved
	// when it observed none); for a cluster, the worst member's.
	WALP99, CommitP99 time.Duration
}

// Failures are the limits s breaks, in words; none when it passes.
func (l Limits) Failures(s Step) []string {
	var fails []string
	if s.Broken != "" {
		fails = append(fails, s.Broken)
	}
	if s.Achieved < l.MinAchieved*s.Offered {
		fails = append(fails, fmt.Sprintf("achieved %.0f/s < %.0f%% of %.0f/s", s.Achieved, l.MinAchieved*100, s.Offered))
	}
	if s.Errors > 0 {
		fails = append(fails, fmt.Sprintf("%d errors", s.Errors))
	}
	if s.WALP99 >= l.WALP99 {
		fails = append(fails, fmt.Sprintf("WAL fsync p99 %s >= %v", FmtDur(s.WALP99), l.WALP99))
	}
	if s.CommitP99 >= l.CommitP99 {
		fails = append(fails, fmt.Sprintf("backend commit p99 %s >= %v", FmtDur(s.CommitP99), l.CommitP99))
	}
	return fails
}

// AtLimit reports whether a passing step's WAL fsync or backend commit
// p99 lies in its limit's own histogram bucket (etcd's buckets double
// from 1 ms: over 8 ms for the WAL's 10 ms, over 16 ms for the commits'
// 25 ms), where etcd's histogram does not tell it from the limit.
func (l Limits) AtLimit(walP99, commitP99 time.Duration) bool {
	below := func(limit time.Duration) time.Duration {
		b := time.Millisecond
		for b*2 < limit {
			b *= 2
		}
		return b
	}
	return walP99 > below(l.WALP99) || commitP99 > below(l.CommitP99)
}

// P99 is the p99 of histogram name over a step, from two scrapes of a
// member's /metrics, and how many it observed (NoneObserved and 0 when
// none).
func P99(before, after metrics.Families, name string) (time.Duration, float64) {
	h, ok := metrics.HistogramDelta(before, after, name)
	if !ok || h.Count == 0 {
		return NoneObserved, 0
	}
	return time.Duration(metrics.Quantile(0.99, h) * float64(time.Second)), h.Count
}

// FmtDur is a step's p99 in milliseconds, "none observed" for
// NoneObserved.
func FmtDur(d time.Duration) string {
	if d == NoneObserved {
		return "none observed"
	}
	return fmt.Sprintf("%.1fms", float64(d)/1e6)
}

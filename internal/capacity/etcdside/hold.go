package etcdside

import (
	"fmt"
	"math"
	"strings"
	"time"

	"etcdbench/internal/etcdload"
	"etcdbench/internal/etcdload/metrics"
	"etcdbench/internal/units"
	"etcdbench/internal/verdict"
)

// fullObservations is how many observations of a member's disk histogram
// make its p99 a p99 rather than its slowest: the backend commits of the
// ten-second steps of a real etcd driven by etcd's benchmark
// (bench/capacity-vs-etcd), one every 100 ms.
const fullObservations = 100

// maxHold is the longest a held step runs by default: the real etcd's
// steps.
const maxHold = 10 * time.Second

// hold says how long a failed step should run again at the same rate
// (0: it should not) and why. A step of 3 s holds about 30 backend
// commits, and their p99 as etcd reports it is their slowest: one commit
// between 16 and 32 ms reads 27.2 ms and fails the step, where a real
// etcd's ten seconds hold a hundred commits whose p99 that one does not
// set. On the plain disk, on 2,000 and on 5,000 write IOPS the etcd side
// failed steps of 1,200-2,620 puts/s so, each 27.2 ms from one commit of
// about 30, where etcd 3.4 passed up to 1,131-4,149 (round 4 of
// bench/capacity-vs-etcd).
//
// A step is held only when every rule it failed is a member's disk p99
// judged from fewer than fullObservations, and none of them is over its
// limit for good: the observations a step of fullObservations would
// still add, however fast, would bring the p99 etcd reports back under
// it. A p99 set by three slow commits of thirty is decided at once (two
// of a hundred between 16 and 32 ms read 24 ms, as etcd interpolates).
func hold(out *etcdload.Outcome, th verdict.Thresholds, step, longest time.Duration) (time.Duration, string) {
	if out == nil || step <= 0 || len(out.Members) == 0 {
		return 0, ""
	}
	disk := map[string]bool{th.WALFsyncP99.ID: true, th.BackendCommitP99.ID: true}
	failed := false
	for _, v := range out.Workload.Verdicts {
		if v.Status != verdict.Fail {
			continue
		}
		if !disk[v.Check] {
			return 0, "" // a rule that more time does not change
		}
		failed = true
	}
	if !failed {
		return holdNearLimit(out, th, step, longest)
	}
	var need time.Duration
	var why string
	for _, m := range out.Members {
		for _, c := range []struct {
			th   verdict.Threshold
			h    metrics.Histogram
			what string
		}{
			{th.WALFsyncP99, m.WALFsync, "WAL fsyncs"},
			{th.BackendCommitP99, m.BackendCommit, "backend commits"},
		} {
			p99 := metrics.Quantile(0.99, c.h)
			if math.IsNaN(p99) || p99 < c.th.Limit {
				continue
			}
			still := fullObservations - c.h.Count
			if still <= 0 || metrics.Quantile(0.99, metrics.WithFast(c.h, still)) >= c.th.Limit {
				return 0, "" // over the limit for good
			}
			d := time.Duration(float64(step) * fullObservations / c.h.Count).Round(time.Second)
			if d > need {
				need = d
				why = fmt.Sprintf("%s's p99 %v came from %.0f %s", m.Target.Name, units.FromSeconds(p99).Round(100*time.Microsecond), c.h.Count, c.what)
			}
		}
	}
	need = min(need, longest)
	if need <= step {
		return 0, ""
	}
	return need, why
}

// holdNearLimit says how long a step that passed should run again (0:
// it should not) and why: when a member's WAL fsync or backend commit
// p99 sits in the histogram bucket that holds its limit (8-16 ms around
// 10 ms, 16-32 ms around 25 ms), a short step's pass is one draw of a
// p99 that a real etcd's ten-second steps put on either side of the
// limit from step to step. On a machine whose CPUs neighbours kept busy,
// the etcd side passed 3 s steps of 1,200 puts/s with WAL p99s of
// 8-9.8 ms, where the embedded etcd, driven by etcd's benchmark for
// 10 s, failed 200-566 (bench/capacity-vs-etcd, busy); beside two busy
// loops and another writer the same member's backend commit p99 read
// 16-30 ms in one 3 s step and 48-400 ms over ten seconds. Such a step
// runs again for the real etcd's ten seconds, and its answer is the
// longer step's.
func holdNearLimit(out *etcdload.Outcome, th verdict.Thresholds, step, longest time.Duration) (time.Duration, string) {
	if step >= longest {
		return 0, ""
	}
	for _, m := range out.Members {
		for _, c := range []struct {
			th   verdict.Threshold
			h    metrics.Histogram
			what string
			// enough observations that the step is a real etcd's
			// ten seconds of them (0: the step's length decides)
			enough float64
		}{
			{th.WALFsyncP99, m.WALFsync, "WAL fsync", 0},
			{th.BackendCommitP99, m.BackendCommit, "backend commit", fullObservations},
		} {
			p99 := metrics.Quantile(0.99, c.h)
			if c.enough > 0 && c.h.Count >= c.enough {
				continue
			}
			if lo := metrics.DiskBucketBelow(c.th.Limit); !math.IsNaN(p99) && lo > 0 && p99 > lo {
				return longest, fmt.Sprintf("%s's %s p99 %v passed within the histogram bucket of its %v limit", m.Target.Name, c.what,
					units.FromSeconds(p99).Round(100*time.Microsecond), units.FromSeconds(c.th.Limit))
			}
		}
	}
	return 0, ""
}

// heldNote says which steps were run again for longer, and why.
func heldNote(held []string, step, longest time.Duration) string {
	return fmt.Sprintf("held steps: a %v step that failed only on a p99 its few observations set, and not for good, or passed with its WAL fsync or backend commit p99 in the histogram bucket of its limit, ran again at the same rate for up to %v, as a real etcd's ten seconds (towards the %d observations they hold); its answer is the longer step's: %s",
		step, longest, fullObservations, strings.Join(held, "; "))
}

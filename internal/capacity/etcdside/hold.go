package etcdside

import (
	"fmt"
	"math"
	"strings"
	"time"

	"etcdbench/internal/etcdload"
	"etcdbench/internal/etcdload/metrics"
	"etcdbench/internal/result"
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
// bench/capacity-vs-etcd). The WAL's syncs are many more, but a stall
// is as long: a 3 s step that holds one reads a p99 that ten seconds of
// syncs dilute.
//
// A step is held only when every rule it failed is a member's disk p99
// and none of them is over its limit for good: the observations a real
// etcd's ten seconds would still add (as many as the step's rate gives
// in them, and at least fullObservations), however fast, would bring the
// p99 etcd reports back under it. A p99 set by three slow commits of
// thirty is decided at once (two of a hundred between 16 and 32 ms read
// 24 ms, as etcd interpolates). A held step runs for the real etcd's
// ten seconds (longest).
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
			window := max(fullObservations, c.h.Count*float64(longest)/float64(step))
			still := window - c.h.Count
			if still <= 0 || metrics.Quantile(0.99, metrics.WithFast(c.h, still)) >= c.th.Limit {
				return 0, "" // over the limit for good
			}
			if need == 0 {
				need = longest
				why = fmt.Sprintf("%s's p99 %v came from %.0f %s, of the %.0f a step of %v holds", m.Target.Name, units.FromSeconds(p99).Round(100*time.Microsecond), c.h.Count, c.what, window, longest)
			}
		}
	}
	if need <= step {
		return 0, ""
	}
	return need, why
}

// holdNearLimit says how long a step that passed should run again (0:
// it should not) and why: when a member's WAL fsync or backend commit
// p99 sits within two histogram buckets of its limit (over 4 ms for the
// WAL's 10 ms, over 8 ms for the commits' 25 ms), a short step's pass is
// one draw of a tail that a real etcd's ten seconds can put over the
// limit: a p99 over some 30 commits is their slowest, and a stall or two
// in ten seconds moves it by buckets. On the same member beside two busy
// loops, 3 s steps passed 300 and 600 puts/s with WAL p99s of 6.6 ms and
// commit p99s of 7.6-7.8 ms, where etcd's benchmark for 10 s failed 200
// and 400 on commit p99s of 196-281 ms; on a quiet disk the WAL's p99 is
// 1-3 ms and such passes stand. A step held so runs again for the real
// etcd's ten seconds, and its answer is the longer step's. Commits are
// not held once a step holds the hundred of a real etcd's ten seconds.
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
			if lo := metrics.DiskBucketBelow(metrics.DiskBucketBelow(c.th.Limit)); !math.IsNaN(p99) && lo > 0 && p99 > lo {
				return longest, fmt.Sprintf("%s's %s p99 %v passed within two histogram buckets of its %v limit", m.Target.Name, c.what,
					units.FromSeconds(p99).Round(100*time.Microsecond), units.FromSeconds(c.th.Limit))
			}
		}
	}
	return 0, ""
}

// heldNote says which steps were run again for longer, and why.
func heldNote(held []string, step, longest time.Duration) string {
	return fmt.Sprintf("held steps: a %v step that failed only on a p99 its few observations set, and not for good, or passed with its WAL fsync or backend commit p99 within two histogram buckets of its limit, ran again at the same rate for up to %v, as a real etcd's ten seconds (towards the %d observations they hold); its answer is the longer step's: %s",
		step, longest, fullObservations, strings.Join(held, "; "))
}

// nearLimit reports whether a step that passed did so with its worst
// member's WAL fsync or backend commit p99 within two histogram buckets
// of its limit (over 4 ms, over 8 ms), as holdNearLimit holds a step: a
// short step's pass there is one draw of a tail that ten seconds can put
// over the limit.
func nearLimit(st result.CapacityStep, th verdict.Thresholds) bool { return withinBuckets(st, th, 2) }

// atLimit reports whether a step that passed did so with its worst
// member's WAL fsync or backend commit p99 in its limit's own histogram
// bucket (over 8 ms for the WAL's 10 ms, over 16 ms for the commits'
// 25 ms): etcd's histogram does not tell such a p99 from the limit, and
// a real etcd whose p99 sits there passes one ten-second window and
// fails the next. Beside four busy loops on two CPUs, a real etcd's WAL
// p99 was 10-15 ms at every rate from 10 to 1,200 puts/s, with passes
// now and then at 7.6-9.8 ms.
func atLimit(st result.CapacityStep, th verdict.Thresholds) bool { return withinBuckets(st, th, 1) }

// withinBuckets reports whether st's worst WAL fsync or backend commit
// p99 lies above the histogram bucket n below its limit's.
func withinBuckets(st result.CapacityStep, th verdict.Thresholds, n int) bool {
	commit := 0.0 // the worst member's backend commit p99, in the step's figures
	for _, f := range st.Extra {
		if f.Name == backendCommitFigure {
			commit = f.Value
		}
	}
	for _, c := range []struct {
		p99, limit float64
	}{{time.Duration(st.SyncP99Ns).Seconds(), th.WALFsyncP99.Limit}, {commit, th.BackendCommitP99.Limit}} {
		lo := c.limit
		for range n {
			lo = metrics.DiskBucketBelow(lo)
		}
		if lo > 0 && c.p99 > lo {
			return true
		}
	}
	return false
}

// backendCommitFigure names the step figure of the worst member's
// backend commit p99 (StepEvidence.Figures).
const backendCommitFigure = "backend_commit_p99"

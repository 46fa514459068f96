package etcdside

import (
	"strings"
	"testing"
	"time"

	"etcdbench/internal/etcdload"
	"etcdbench/internal/etcdload/metrics"
	"etcdbench/internal/etcdload/observe"
	"etcdbench/internal/result"
	"etcdbench/internal/verdict"
)

// A step that failed only on a disk p99 its few observations set runs
// again, long enough for about a hundred of them; one over its limit for
// good, one that failed another rule and one whose p99 came from enough
// observations do not.
func TestHold(t *testing.T) {
	th := verdict.Defaults()
	outcome := func(wal, commit metrics.Histogram, others ...verdict.Verdict) *etcdload.Outcome {
		ms := []observe.Member{{Target: observe.Target{Name: "member0"}, WALFsync: wal, BackendCommit: commit}}
		vs, _ := etcdload.JudgeDisk(th, ms, stepMinObservations, true)
		return &etcdload.Outcome{Workload: result.Workload{Verdicts: append(others, vs...)}, Members: ms}
	}
	fastWAL := metrics.DiskHistogram(0, 3000)                 // 3,000 syncs of 1-2 ms
	oneSlow := metrics.DiskHistogram(0, 0, 20, 10, 0, 1)      // 31 commits, one of 16-32 ms: p99 27.2 ms
	twoSlow := metrics.DiskHistogram(0, 0, 20, 9, 0, 2)       // two of 31: 24 ms with 69 fast ones more, as etcd interpolates
	threeSlow := metrics.DiskHistogram(0, 0, 20, 8, 0, 3)     // three of 31: 26.7 ms however fast the 69 more
	manySlow := metrics.DiskHistogram(0, 0, 80, 20, 0, 2)     // 102 commits
	slowWAL := metrics.DiskHistogram(0, 0, 0, 0, 1000, 100)   // 1,100 syncs, p99 in 16-32 ms
	fewSlowWAL := metrics.DiskHistogram(0, 0, 0, 40, 0, 0, 1) // 41 syncs, one of 32-64 ms
	slowThroughput := verdict.Verdict{Check: "check_perf_throughput", Status: verdict.Fail}
	passed := verdict.Verdict{Check: "check_perf_throughput", Status: verdict.Pass}
	step := 3 * time.Second
	for _, tc := range []struct {
		name string
		out  *etcdload.Outcome
		want time.Duration
	}{
		{"one slow commit of 31", outcome(fastWAL, oneSlow, passed), 10 * time.Second},
		{"one slow WAL sync of 41", outcome(fewSlowWAL, metrics.DiskHistogram(0, 31)), 10 * time.Second},
		// 450 syncs, six of 16-32 ms: p99 20 ms from one stall of a 3 s
		// step; the 1,500 of ten seconds at that rate dilute it under the
		// limit, so the step runs them (a busy machine's stall, which 3 s
		// steps failed where ten seconds of etcd's benchmark passed).
		{"a stall among a step's WAL syncs", outcome(metrics.DiskHistogram(0, 444, 0, 0, 0, 6), metrics.DiskHistogram(0, 31)), 10 * time.Second},
		{"two slow commits of 31", outcome(fastWAL, twoSlow), 10 * time.Second},
		{"three slow commits of 31", outcome(fastWAL, threeSlow), 0},
		{"a hundred commits", outcome(fastWAL, manySlow), 0},
		{"the WAL over its limit for good", outcome(slowWAL, oneSlow), 0},
		{"a rule time does not change", outcome(fastWAL, oneSlow, slowThroughput), 0},
		{"passed", outcome(fastWAL, metrics.DiskHistogram(0, 31)), 0},
		// 1,000 syncs, 12 of 8-16 ms: p99 8.7 ms, a pass in the limit's
		// bucket, which a busy machine's neighbours put on either side.
		{"passed in the limit's bucket", outcome(metrics.DiskHistogram(0, 988, 0, 0, 12), metrics.DiskHistogram(0, 31)), 10 * time.Second},
		// 1,000 syncs, 12 of 4-8 ms: p99 about 5 ms, two buckets under the
		// limit, as a busy machine's wake-ups put it (6.6 ms beside two
		// busy loops, where ten seconds failed on a commit stall).
		{"passed within two buckets", outcome(metrics.DiskHistogram(0, 988, 0, 12), metrics.DiskHistogram(0, 31)), 10 * time.Second},
		{"passed with commits of 4-8 ms", outcome(fastWAL, metrics.DiskHistogram(0, 0, 20, 11)), 0},
		// 50 commits, one of 16-32 ms: p99 24 ms, a pass in the commit
		// limit's bucket, held as the WAL's is (with a hundred commits,
		// "a hundred commits" above, it is a real etcd's ten seconds).
		{"passed with the commit p99 in the limit's bucket", outcome(fastWAL, metrics.DiskHistogram(0, 0, 30, 19, 0, 1)), 10 * time.Second},
		{"no members", &etcdload.Outcome{Workload: result.Workload{Verdicts: []verdict.Verdict{slowThroughput}}}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, why := hold(tc.out, th, step, maxHold)
			if got != tc.want {
				t.Fatalf("hold = %v (%s), want %v", got, why, tc.want)
			}
			if got > 0 && !strings.Contains(why, "member0's") {
				t.Fatalf("why %q does not name the member and its p99", why)
			}
		})
	}
	// A step of the real etcd's length is never held: it has its hundred.
	if got, _ := hold(outcome(fastWAL, oneSlow), th, maxHold, maxHold); got != 0 {
		t.Fatalf("a %v step held for %v", maxHold, got)
	}
	if got, _ := hold(outcome(metrics.DiskHistogram(0, 988, 0, 0, 12), metrics.DiskHistogram(0, 31)), th, maxHold, maxHold); got != 0 {
		t.Fatalf("a %v pass held for %v", maxHold, got)
	}
	for limit, want := range map[float64]float64{0.010: 0.008, 0.025: 0.016, 0.016: 0.008, 0.0005: 0, 100: 0} {
		if got := metrics.DiskBucketBelow(limit); got != want {
			t.Errorf("DiskBucketBelow(%v) = %v, want %v", limit, got, want)
		}
	}
}

// etcd capacity's own verdict: a sweep that failed at 27 puts/s and
// passed its probe at 54 is unstable, a WARN with its bounds, not a FAIL
// at 25; one with nothing passing above its failure stays a FAIL.
func TestCapacityWorkloadUnstable(t *testing.T) {
	th := verdict.Defaults()
	steps := []result.CapacityStep{
		{Phase: "ladder", Rate: 19, Status: verdict.Pass, Decided: true},
		{Phase: "bisect", Rate: 27, Status: verdict.Fail, Decided: true},
		{Phase: "bisect", Rate: 25, Status: verdict.Pass, Decided: true},
		{Phase: "probe", Rate: 54, Status: verdict.Pass, Decided: true},
	}
	for _, tc := range []struct {
		name   string
		steps  []result.CapacityStep
		status verdict.Status
	}{
		{"a pass above the failure", steps, verdict.Warn},
		{"none above it", steps[:3], verdict.Fail},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &result.Capacity{Rate: 25, Upper: 27, Decided: true, Steps: tc.steps}
			w := capacityWorkload(c, CapacitySpec{}, time.Second)
			v := w.Verdicts[len(w.Verdicts)-1]
			if v.Check != th.CapacityMin.ID || v.Status != tc.status {
				t.Fatalf("verdict %s %s, want %s", v.Check, v.Status, tc.status)
			}
			if unstable := strings.Contains(v.Detail, "between 25 and 54 puts/s"); unstable != (tc.status == verdict.Warn) {
				t.Errorf("detail %q", v.Detail)
			}
		})
	}
}

// A pass is near its limits when its WAL fsync p99 is over 4 ms or its
// backend commit p99 (the step's figure) over 8 ms (check --quick's
// answer is then rechecked over ten seconds), and at its limit when the
// WAL's p99 is in the 10 ms limit's own histogram bucket (over 8 ms) or
// the commits' in the 25 ms limit's (over 16 ms): the answer's step is
// then judged on the majority of sweep.Windows runs, whatever the side's
// step length.
func TestAtLimit(t *testing.T) {
	th := verdict.Defaults()
	step := func(wal time.Duration, commit float64) result.CapacityStep {
		return result.CapacityStep{SyncP99Ns: wal.Nanoseconds(), Extra: []result.Figure{{Name: backendCommitFigure, Value: commit, Unit: "s"}}}
	}
	for _, tc := range []struct {
		name       string
		st         result.CapacityStep
		near, flip bool
	}{
		{"quiet", step(1700*time.Microsecond, 0.004), false, false},
		{"WAL two buckets under", step(6*time.Millisecond, 0.004), true, false},
		{"WAL in the limit's bucket", step(9*time.Millisecond, 0.004), true, true},
		{"commits two buckets under", step(1700*time.Microsecond, 0.012), true, false},
		{"commits in the limit's bucket", step(1700*time.Microsecond, 0.020), true, true},
		{"no commit figure", result.CapacityStep{SyncP99Ns: (3 * time.Millisecond).Nanoseconds()}, false, false},
	} {
		if got := nearLimit(tc.st, th); got != tc.near {
			t.Errorf("%s: nearLimit = %v, want %v", tc.name, got, tc.near)
		}
		if got := atLimit(tc.st, th); got != tc.flip {
			t.Errorf("%s: atLimit = %v, want %v", tc.name, got, tc.flip)
		}
	}
}

package capacity

import (
	"fmt"
	"slices"
	"time"

	"etcdbench/internal/result"
)

// What bends a capacity curve.
const (
	BendNone     = "none"     // no step failed
	BendRateCap  = "rate-cap" // syncs per second flat while the offered rate rises
	BendQueueing = "queueing" // sync time grows with the batch it flushes
	BendStalls   = "stalls"   // rare slow syncs: the tail fails, the median does not
	BendBacklog  = "backlog"  // the rate was not kept, and nothing else failed
)

// The figures the diagnosis reads, as data.
const (
	// batching: a step with fewer syncs per second than this share of
	// its offered rate puts several entries into a sync.
	batching = 0.95
	// flatSpread: syncs per second within this ratio over the failing
	// steps, spanning at least flatSpan of offered rate, are "flat".
	flatSpread, flatSpan = 1.25, 1.5
	// tailRatio: a failing step whose p99 is this many times its p50,
	// with the p50 under half the limit, fails by its tail alone.
	tailRatio = 4
	// growth: the failing step's sync p50 this many times the idle
	// steps' is sync time growing with the batch.
	growth = 1.5
)

// Bend says what bends the curve of steps (in any order) and the
// evidence, in words: limitNs is the p99 limit the steps were judged
// against.
func Bend(steps []result.CapacityStep, limitNs int64) (kind, evidence string) {
	// A step that failed once and passed when repeated was a stall, not
	// the curve.
	s := slices.DeleteFunc(slices.Clone(steps), func(x result.CapacityStep) bool { return x.Phase == PhaseRetried })
	slices.SortFunc(s, func(a, b result.CapacityStep) int {
		switch {
		case a.Rate < b.Rate:
			return -1
		case a.Rate > b.Rate:
			return 1
		}
		return 0
	})
	fail := -1
	for i := range s {
		if Failed(s[i]) {
			fail = i
			break
		}
	}
	if fail < 0 {
		return BendNone, "no step failed: the limit lies above the highest rate tried"
	}
	f := s[fail]
	dur := func(ns int64) time.Duration { return time.Duration(ns).Round(10 * time.Microsecond) }
	// A rate cap: the failing steps that batch (fewer syncs than
	// entries) and whose median sync is itself near the limit (every sync
	// waits for its slot) keep the same syncs per second and the same
	// sync time while the offered rate rises.
	var capped []result.CapacityStep
	for _, x := range s[fail:] {
		if Failed(x) && x.SyncsPerSec > 0 && x.SyncsPerSec < batching*x.Rate && x.SyncP50Ns >= limitNs/2 {
			capped = append(capped, x)
		}
	}
	if len(capped) >= 2 {
		lo, hi := capped[0].SyncsPerSec, capped[0].SyncsPerSec
		p50lo, p50hi := capped[0].SyncP50Ns, capped[0].SyncP50Ns
		for _, x := range capped {
			lo, hi = min(lo, x.SyncsPerSec), max(hi, x.SyncsPerSec)
			p50lo, p50hi = min(p50lo, x.SyncP50Ns), max(p50hi, x.SyncP50Ns)
		}
		span := capped[len(capped)-1].Rate / capped[0].Rate
		if hi <= flatSpread*lo && span >= flatSpan && float64(p50hi) <= growth*float64(p50lo) {
			return BendRateCap, fmt.Sprintf("syncs per second stay at %.0f-%.0f while the offered rate rises %.1fx (%.0f to %.0f/s), and each sync takes %v-%v whatever it carries: a cap on the sync rate (an IOPS limit); batching absorbs it, but the wait for the next slot is itself over the limit",
				lo, hi, span, capped[0].Rate, capped[len(capped)-1].Rate, dur(p50lo), dur(p50hi))
		}
	}
	if f.SyncP50Ns > 0 && f.SyncP99Ns >= tailRatio*f.SyncP50Ns && f.SyncP50Ns < limitNs/2 {
		return BendStalls, fmt.Sprintf("at %.0f/s the fdatasync p99 is %v while its median is %v: rare slow syncs (periodic stalls, other writers) fail the tail, not the rate itself", f.Rate, dur(f.SyncP99Ns), dur(f.SyncP50Ns))
	}
	base := s[0]
	if base.SyncP50Ns > 0 && float64(f.SyncP50Ns) >= growth*float64(base.SyncP50Ns) && f.BytesPerSync > growth*base.BytesPerSync {
		return BendQueueing, fmt.Sprintf("the median fdatasync grows from %v at %.0f/s (%.0f bytes a sync) to %v at %.0f/s (%.0f bytes): each sync flushes the queue that built up during the last, so sync time and queue feed each other",
			dur(base.SyncP50Ns), base.Rate, base.BytesPerSync, dur(f.SyncP50Ns), f.Rate, f.BytesPerSync)
	}
	if f.SyncP99Ns < limitNs && f.LagEndNs > 0 {
		return BendBacklog, fmt.Sprintf("at %.0f/s the syncs stay under the limit but the writer ended %v behind its schedule", f.Rate, dur(f.LagEndNs))
	}
	return BendQueueing, fmt.Sprintf("at %.0f/s the fdatasync median is %v and its p99 %v: the syncs themselves slow down as the rate rises", f.Rate, dur(f.SyncP50Ns), dur(f.SyncP99Ns))
}

package sweep

import (
	"fmt"
	"slices"
	"time"

	"etcdbench/internal/finding"
	"etcdbench/internal/result"
	"etcdbench/internal/units"
	"etcdbench/internal/verdict"
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

// The cases of a bend.
const (
	// CaseBackend: the backend's commits fail first, the WAL does not.
	CaseBackend = "backend"
	// CaseGrowth: the median sync grows with the bytes each flushes.
	CaseGrowth = "growth"
	// CaseSlowdown: the syncs slow down, no other shape fits.
	CaseSlowdown = "slowdown"
)

// Bend says what bends the curve of steps (in any order): limitNs is the
// p99 limit the steps were judged against. The finding's facts are the
// figures that decided it; BendWords says it in words.
func Bend(steps []result.CapacityStep, limitNs int64) finding.Finding {
	// A step that failed once and passed when repeated was a stall, and
	// a low rate's failure under a higher rate that passed a busy
	// machine's wake-ups: neither is the curve.
	s := slices.DeleteFunc(slices.Clone(steps), Overruled)
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
		return finding.Finding{Kind: finding.None}
	}
	f := s[fail]
	// The backend's commits fail first: the WAL syncs within their limit,
	// bbolt's commits (their pages scattered, one write each) over
	// theirs.
	if commitLimit := units.FromSeconds(verdict.Defaults().BackendCommitP99.Limit).Nanoseconds(); f.BackendCommitP99Ns >= commitLimit && f.SyncP99Ns < limitNs {
		return finding.Finding{Kind: finding.Disk, Case: CaseBackend, Facts: []finding.Fact{
			{Name: "rate", Value: f.Rate, Unit: "1/s"},
			{Name: "backend_commit_p99", Value: float64(f.BackendCommitP99Ns), Unit: "ns", Limit: float64(commitLimit)},
			{Name: "sync_p99", Value: float64(f.SyncP99Ns), Unit: "ns", Limit: float64(limitNs)},
		}}
	}
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
		first, last := capped[0].Rate, capped[len(capped)-1].Rate
		if hi <= flatSpread*lo && last/first >= flatSpan && float64(p50hi) <= growth*float64(p50lo) {
			return finding.Finding{Kind: finding.RateCap, Facts: []finding.Fact{
				{Name: "syncs_per_sec_min", Value: lo, Unit: "1/s"}, {Name: "syncs_per_sec_max", Value: hi, Unit: "1/s", Limit: flatSpread * lo},
				{Name: "rate_first", Value: first, Unit: "1/s"}, {Name: "rate_last", Value: last, Unit: "1/s"},
				{Name: "sync_p50_min", Value: float64(p50lo), Unit: "ns", Limit: float64(limitNs / 2)}, {Name: "sync_p50_max", Value: float64(p50hi), Unit: "ns"},
			}}
		}
	}
	at := finding.Fact{Name: "rate", Value: f.Rate, Unit: "1/s"}
	p50 := finding.Fact{Name: "sync_p50", Value: float64(f.SyncP50Ns), Unit: "ns"}
	p99 := finding.Fact{Name: "sync_p99", Value: float64(f.SyncP99Ns), Unit: "ns", Limit: float64(limitNs)}
	if f.SyncP50Ns > 0 && f.SyncP99Ns >= tailRatio*f.SyncP50Ns && f.SyncP50Ns < limitNs/2 {
		return finding.Finding{Kind: finding.Stalls, Facts: []finding.Fact{at, p50, p99}}
	}
	base := s[0]
	if base.SyncP50Ns > 0 && float64(f.SyncP50Ns) >= growth*float64(base.SyncP50Ns) && f.BytesPerSync > growth*base.BytesPerSync {
		return finding.Finding{Kind: finding.Queueing, Case: CaseGrowth, Facts: []finding.Fact{
			{Name: "base_rate", Value: base.Rate, Unit: "1/s"}, {Name: "base_sync_p50", Value: float64(base.SyncP50Ns), Unit: "ns"},
			{Name: "base_bytes_per_sync", Value: base.BytesPerSync, Unit: "B"},
			at, p50, {Name: "bytes_per_sync", Value: f.BytesPerSync, Unit: "B"},
		}}
	}
	if f.SyncP99Ns < limitNs && f.LagEndNs > 0 {
		return finding.Finding{Kind: finding.Backlog, Facts: []finding.Fact{at, p99, {Name: "lag_end", Value: float64(f.LagEndNs), Unit: "ns"}}}
	}
	return finding.Finding{Kind: finding.Queueing, Case: CaseSlowdown, Facts: []finding.Fact{at, p50, p99}}
}

// BendWords says a Bend's finding in words, with its figures.
func BendWords(b finding.Finding) string {
	v := func(name string) float64 { x, _ := b.Fact(name); return x.Value }
	dur := func(name string) time.Duration { return time.Duration(v(name)).Round(10 * time.Microsecond) }
	switch {
	case b.Kind == finding.None:
		return "no step failed: the limit lies above the highest rate tried"
	case b.Kind == finding.RateCap:
		return fmt.Sprintf("syncs per second stay at %.0f-%.0f while the offered rate rises %.1fx (%.0f to %.0f/s), and each sync takes %v-%v whatever it carries: a cap on the sync rate (an IOPS limit); batching absorbs it, but the wait for the next slot is itself over the limit",
			v("syncs_per_sec_min"), v("syncs_per_sec_max"), v("rate_last")/v("rate_first"), v("rate_first"), v("rate_last"), dur("sync_p50_min"), dur("sync_p50_max"))
	case b.Kind == finding.Stalls:
		return fmt.Sprintf("at %.0f/s the fdatasync p99 is %v while its median is %v: rare slow syncs (periodic stalls, other writers) fail the tail, not the rate itself", v("rate"), dur("sync_p99"), dur("sync_p50"))
	case b.Kind == finding.Queueing && b.Case == CaseGrowth:
		return fmt.Sprintf("the median fdatasync grows from %v at %.0f/s (%.0f bytes a sync) to %v at %.0f/s (%.0f bytes): each sync flushes the queue that built up during the last, so sync time and queue feed each other",
			dur("base_sync_p50"), v("base_rate"), v("base_bytes_per_sync"), dur("sync_p50"), v("rate"), v("bytes_per_sync"))
	case b.Kind == finding.Disk && b.Case == CaseBackend:
		return fmt.Sprintf("at %.0f/s the backend's commits fail first: their p99 is %v, over the %v limit, while the WAL's fdatasync p99 is %v: bbolt's commits write their pages scattered, one I/O each, and the device does not keep up with them",
			v("rate"), dur("backend_commit_p99"), time.Duration(b.Facts[1].Limit), dur("sync_p99"))
	case b.Kind == finding.Backlog:
		return fmt.Sprintf("at %.0f/s the syncs stay under the limit but the writer ended %v behind its schedule", v("rate"), dur("lag_end"))
	}
	return fmt.Sprintf("at %.0f/s the fdatasync median is %v and its p99 %v: the syncs themselves slow down as the rate rises", v("rate"), dur("sync_p50"), dur("sync_p99"))
}

package stats

import (
	"fmt"
	"math"
	"time"
)

// Outcome is what a stop rule concluded.
type Outcome string

// The outcomes of a decision.
const (
	Undecided Outcome = "undecided" // the data cannot tell yet
	Pass      Outcome = "pass"      // the quantile is below the threshold
	Fail      Outcome = "fail"      // the quantile is above the threshold
)

// StopRule decides, from the count of samples above a latency threshold,
// whether the q-quantile of the latency is below the threshold (pass) or
// above it (fail), with a stated confidence, and so when a run may stop.
//
// "p99 < 10 ms" is the same statement as "P(latency > 10 ms) < 1 %". The
// number of exceedances among independent samples is binomial, so exact
// Clopper-Pearson bounds on that probability decide without assuming any
// shape for the latency distribution: pass when the upper bound is below
// 1-q, fail when the lower bound is above it.
//
// Two guards make this safe for real disks. Samples are autocorrelated
// (stalls come in bursts), so counts are deflated by the design effect
// estimated from per-second batches before the bounds are computed; and the
// rule never stops before MinSamples and MinDuration, so a run cannot end
// inside a quiet stretch between periodic stalls. Because the rule is
// consulted repeatedly (once a second), each look uses the confidence level
// divided among all looks the run could make (Bonferroni), so the overall
// chance of a wrong early verdict stays below 1-Confidence.
type StopRule struct {
	Threshold   time.Duration // latency the quantile is judged against
	Quantile    float64       // e.g. 0.99
	Confidence  float64       // overall confidence of a decision, e.g. 0.95
	MinSamples  int64         // never decide on fewer samples
	MinDuration time.Duration // never decide before this much time has passed
	MaxDuration time.Duration // the run's cap; with MinDuration it bounds the looks
	Interval    time.Duration // time between looks (one second)
}

// Validate reports a rule that cannot work.
func (r StopRule) Validate() error {
	switch {
	case r.Threshold <= 0:
		return fmt.Errorf("threshold must be positive, got %v", r.Threshold)
	case !(r.Quantile > 0 && r.Quantile < 1):
		return fmt.Errorf("quantile must be between 0 and 1, got %v", r.Quantile)
	case !(r.Confidence > 0 && r.Confidence < 1):
		return fmt.Errorf("confidence must be between 0 and 1, got %v", r.Confidence)
	case r.MinSamples < 0 || r.MinDuration < 0 || r.MaxDuration < 0:
		return fmt.Errorf("minimums and cap must not be negative")
	}
	return nil
}

// Looks returns how many times the rule may be consulted before the cap: one
// look per Interval between MinDuration and MaxDuration, at least one.
func (r StopRule) Looks() int {
	if r.MaxDuration <= r.MinDuration || r.Interval <= 0 {
		return 1
	}
	return 1 + int((r.MaxDuration-r.MinDuration)/r.Interval)
}

// PerLookConfidence is the confidence level each look must reach so that all
// looks together keep the overall Confidence.
func (r StopRule) PerLookConfidence() float64 {
	return 1 - (1-r.Confidence)/float64(r.Looks())
}

// SamplesToPass is the fewest samples a pass needs at one look: none of
// them over the threshold, and the upper bound on the fraction that is
// (1-(1-level)^(1/n) for none seen) under 1-Quantile at the per-look
// level; never fewer than MinSamples. A p99 at the sweep's per-look
// 99.99 % needs some 900: 18 s of syncs at 50 a second.
func (r StopRule) SamplesToPass() int64 {
	n := int64(math.Ceil(math.Log(1-r.PerLookConfidence()) / math.Log(r.Quantile)))
	return max(n, r.MinSamples)
}

// maxSamplesToPass bounds SamplesToPassAt's search: a run that would need
// more has no pass in any time a run has.
const maxSamplesToPass = 1 << 30

// SamplesToPassAt is SamplesToPass where a share frac of the samples are
// over the threshold: the fewest n for which frac*n of them leave the
// upper bound on that share under 1-Quantile at the per-look level (never
// fewer than SamplesToPass). It is what a run whose slow share so far is
// frac still needs for a pass; maxSamplesToPass when frac is at 1-Quantile
// or over, or no n up to it would do. A p99 at the sweep's per-look
// 99.8 % needs 621 samples with none slow, 1,056 with one in 500 and
// 2,961 with one in 200.
func (r StopRule) SamplesToPassAt(frac float64) int64 {
	n0 := r.SamplesToPass()
	limit := 1 - r.Quantile
	if frac <= 0 {
		return n0
	}
	if frac >= limit {
		return maxSamplesToPass
	}
	level := r.PerLookConfidence()
	passes := func(n int64) bool { return UpperBound(frac*float64(n), float64(n), level) < limit }
	if passes(n0) {
		return n0
	}
	lo, hi := n0, 2*n0 // passes(lo) is false
	for !passes(hi) {
		if hi >= maxSamplesToPass {
			return maxSamplesToPass
		}
		lo, hi = hi, min(2*hi, maxSamplesToPass)
	}
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if passes(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}

// Decision is the rule's judgement at one moment.
type Decision struct {
	Outcome Outcome
	Reason  string  // why it stopped or why not yet, for people
	NEff    float64 // effective number of independent samples
	KEff    float64 // effective number of exceedances
	Lower   float64 // lower bound on P(latency > threshold) at the per-look level
	Upper   float64 // upper bound at the per-look level
}

// Bounds computes the exceedance bounds at confidence level for n samples of
// which k exceeded the threshold, with design effect deff.
func Bounds(n, k int64, deff, level float64) (nEff, kEff, lower, upper float64) {
	if deff < 1 || math.IsNaN(deff) {
		deff = 1
	}
	nEff, kEff = float64(n)/deff, float64(k)/deff
	return nEff, kEff, LowerBound(kEff, nEff, level), UpperBound(kEff, nEff, level)
}

// Decide judges n samples, k of them above the threshold, taken over elapsed
// time, whose per-second batches gave design effect deff.
func (r StopRule) Decide(n, k int64, deff float64, elapsed time.Duration) Decision {
	var d Decision
	d.NEff, d.KEff, d.Lower, d.Upper = Bounds(n, k, deff, r.PerLookConfidence())
	d.Outcome = Undecided
	limit := 1 - r.Quantile
	switch {
	case n < r.MinSamples:
		d.Reason = fmt.Sprintf("fewer than the minimum %d samples", r.MinSamples)
	case elapsed < r.MinDuration:
		d.Reason = fmt.Sprintf("shorter than the minimum %v", r.MinDuration)
	case d.Upper < limit:
		d.Outcome = Pass
		d.Reason = fmt.Sprintf("at most %.3g %% of operations exceed %v, under the %.3g %% a p%.4g below it allows (%.4g %% overall confidence)", 100*d.Upper, r.Threshold, 100*limit, 100*r.Quantile, 100*r.Confidence)
	case d.Lower > limit:
		d.Outcome = Fail
		d.Reason = fmt.Sprintf("at least %.3g %% of operations exceed %v, over the %.3g %% a p%.4g below it allows (%.4g %% overall confidence)", 100*d.Lower, r.Threshold, 100*limit, 100*r.Quantile, 100*r.Confidence)
	default:
		d.Reason = fmt.Sprintf("between %.3g %% and %.3g %% of operations exceed %v, which straddles the %.3g %% limit", 100*d.Lower, 100*d.Upper, r.Threshold, 100*limit)
	}
	return d
}

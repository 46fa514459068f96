package search

import (
	"context"
	"math"
	"slices"

	capsweep "etcdbench/internal/capacity/sweep"
)

// Search is the bisection of a real etcd's highest passing rate: a
// geometric ladder up (or down) from Start by Factor until a step
// passes and one fails (a failing Start first tries capsweep.UpRungs
// rungs above it), then bisection (geometric means) until the
// lowest failing rate is within Resolution of the highest passing one.
type Search struct {
	Start, Factor, Resolution float64
	Min, Max                  float64 // the rates it gives up below and above
	// Confirm repeats a failing step of the climb once, as etcdbench's
	// sweeps do (their confirm rung): the first step, or one above
	// every rate that passed; a repeat that passes overrules the
	// failure (retried). capacity-vs-etcd's --paired searches so, for the
	// truth and etcdbench's side to differ in how they measure a rate
	// only, not in how they pick the rates.
	Confirm bool
	// Vote judges the search's answer, when it passed at its limit (its
	// WAL or commit p99 in the limit's own histogram bucket), on the
	// majority of capsweep.Windows runs at its rate, as etcdbench's side
	// rechecks its answer's step: a rate that falls takes the answer
	// down to the highest pass below it, judged in turn while
	// capsweep.MaxRechecks runs allow.
	Vote bool
}

// Trial is one rate tried and its verdict.
type Trial struct {
	Rate float64
	Pass bool
	// AtLimit: it passed with a p99 in its limit's own bucket
	// (Limits.AtLimit).
	AtLimit bool
	// Vote: a run of the answer's vote (Search.Vote), not of the search.
	Vote bool
}

// Run drives s to its end: try runs one step at rate (vote says it is a
// run of the answer's vote) and returns its verdict. It returns the
// trials and their bounds (Bounds), also when try fails, with what was
// tried so far.
func (s Search) Run(ctx context.Context, try func(ctx context.Context, rate float64, vote bool) (pass, atLimit bool, err error)) ([]Trial, error) {
	var ts []Trial
	for r := s.Next(nil); r > 0; r = s.Next(ts) {
		if err := ctx.Err(); err != nil {
			return ts, err
		}
		vote := s.Voting(ts)
		pass, at, err := try(ctx, r, vote)
		if err != nil {
			return ts, err
		}
		ts = append(ts, Trial{Rate: r, Pass: pass, AtLimit: at, Vote: vote})
	}
	return ts, nil
}

// Voting says whether the next run (Next) is one of the answer's vote.
func (s Search) Voting(ts []Trial) bool {
	_, vote := s.afterSearch(ts)
	return vote && s.Vote && len(ts) > 0 && (hasVotes(ts) || s.searchNext(ts) == 0)
}

func hasVotes(ts []Trial) bool { return slices.ContainsFunc(ts, func(t Trial) bool { return t.Vote }) }

// afterSearch is the next rate once the search is done (Search.Vote),
// and whether it is a run of a vote, as etcdbench's side goes on
// (capsweep's recheck): the rate under vote until two runs of
// capsweep.Windows (the search's own pass among them) agree; when it
// fell, the highest pass below it if that passed at its limit and the
// runs left allow a whole vote; else, once, the gap between that pass and
// the fallen rate bisected again (runs that are not votes) when the runs
// left allow a vote on its answer, then that answer voted on. 0 when
// done.
func (s Search) afterSearch(ts []Trial) (float64, bool) {
	var votes []Trial
	first := -1
	for i, t := range ts {
		if t.Vote {
			votes = append(votes, t)
			if first < 0 {
				first = i
			}
		}
	}
	majority := (capsweep.Windows + 1) / 2
	fell := false
	if n := len(votes); n > 0 {
		rate := votes[n-1].Rate
		passes, fails := 1, 0 // the search's own pass at rate
		for _, v := range votes {
			switch {
			case v.Rate != rate:
			case v.Pass:
				passes++
			default:
				fails++
			}
		}
		switch {
		case passes >= majority:
			return 0, false
		case fails < majority:
			return rate, true
		}
		fell = true
	}
	if !fell {
		// The search just ended: its answer, if it passed at its limit.
		if lo, _ := Bounds(ts); s.candidate(ts, votes, lo) {
			return lo, true
		}
		return 0, false
	}
	// The last rate voted on fell. end is the last run of the gap's
	// bisection after the first vote (-1: none yet).
	end := -1
	for i := first; i < len(ts); i++ {
		if !ts[i].Vote {
			end = i
		}
	}
	budget := len(votes)+capsweep.Windows-1 <= capsweep.MaxRechecks
	lo, _ := Bounds(ts)
	switch {
	case end < 0: // before any bisection: the pass below, then the gap
		if s.candidate(ts, votes, lo) {
			return lo, true
		}
		if budget {
			if r := s.searchNext(ts); r > 0 {
				return r, false
			}
		}
	case !slices.ContainsFunc(ts[end:], func(t Trial) bool { return t.Vote }): // bisecting
		if r := s.searchNext(ts); r > 0 {
			return r, false
		}
		if s.candidate(ts, votes, lo) {
			return lo, true
		}
	default: // voting after the bisection: no second one
		if s.candidate(ts, votes, lo) {
			return lo, true
		}
	}
	return 0, false
}

// candidate says whether rate, the answer now, is voted on: it passed
// at its limit in a run of the search, was not voted on yet, and the
// runs left allow a whole vote.
func (s Search) candidate(ts, votes []Trial, rate float64) bool {
	if len(votes)+capsweep.Windows-1 > capsweep.MaxRechecks || slices.ContainsFunc(votes, func(v Trial) bool { return v.Rate == rate }) {
		return false
	}
	return slices.ContainsFunc(ts, func(t Trial) bool { return t.Rate == rate && t.Pass && t.AtLimit && !t.Vote })
}

// Bounds are the highest passing rate below the lowest failing one (0
// when none) and that failing rate (+Inf when none). A rate that passed
// above a failing one (noise) counts for nothing, except above a first
// step that failed: the rungs tried above it (capsweep.UpRungs, as
// etcdbench's sweeps do) that pass overrule the failures below them,
// a light load's wake-ups on a busy machine (lowFloor).
func Bounds(ts []Trial) (lo, hi float64) {
	ts = withoutRetried(ts)
	hi = math.Inf(1)
	floor := lowFloor(ts)
	for _, t := range ts {
		if !t.Pass && t.Rate < hi && t.Rate >= floor {
			hi = t.Rate
		}
	}
	for _, t := range ts {
		if t.Pass && t.Rate < hi && t.Rate > lo {
			lo = t.Rate
		}
	}
	return lo, hi
}

// lowFloor is the lowest rate that passed above a first step that
// failed, or 0: failures below it are a low rate's, not the limit's.
func lowFloor(ts []Trial) float64 {
	if len(ts) == 0 || ts[0].Pass {
		return 0
	}
	floor := 0.0
	for _, t := range ts[1:] {
		if t.Pass && t.Rate > ts[0].Rate && (floor == 0 || t.Rate < floor) {
			floor = t.Rate
		}
	}
	return floor
}

// withoutRetried is ts without the failures that passed when repeated
// at once (Search.Confirm).
func withoutRetried(ts []Trial) []Trial {
	var out []Trial
	for i, t := range ts {
		if !t.Pass && i+1 < len(ts) && ts[i+1].Rate == t.Rate && ts[i+1].Pass {
			continue
		}
		out = append(out, t)
	}
	return out
}

// confirms says whether the last of ts is a failure of the climb to
// repeat (Search.Confirm): not itself a repeat, above every other rate
// tried, and every rate below it passed (a first step that failed, and
// the rungs above it, are not the climb's after the first).
func confirms(ts []Trial) bool {
	n := len(ts) - 1
	last := ts[n]
	if last.Pass || n > 0 && ts[n-1].Rate == last.Rate {
		return false
	}
	for _, t := range withoutRetried(ts[:n]) {
		if t.Rate >= last.Rate || !t.Pass {
			return false
		}
	}
	return true
}

// Next is the rate to try after ts, or 0 when the search (and the
// answer's vote, Search.Vote) is done.
func (s Search) Next(ts []Trial) float64 {
	if s.Vote && len(ts) > 0 && (hasVotes(ts) || s.searchNext(ts) == 0) {
		r, _ := s.afterSearch(ts)
		return r
	}
	return s.searchNext(ts)
}

// searchNext is the search's next rate, its vote aside.
func (s Search) searchNext(ts []Trial) float64 {
	if len(ts) == 0 {
		return math.Round(s.Start)
	}
	if s.Confirm && confirms(ts) {
		return ts[len(ts)-1].Rate
	}
	// A first step that failed: the rungs above it before the descent.
	if up := len(ts) - 1; !ts[0].Pass && up < capsweep.UpRungs && !slices.ContainsFunc(ts, func(t Trial) bool { return t.Pass }) {
		if r := math.Round(ts[up].Rate * s.Factor); r <= s.Max {
			return r
		}
	}
	lo, hi := Bounds(ts)
	var r float64
	switch {
	case math.IsInf(hi, 1):
		r = lo * s.Factor
		if r > s.Max {
			return 0
		}
	case lo == 0:
		r = hi / s.Factor
		if r < s.Min {
			return 0
		}
	case hi/lo <= s.Resolution:
		return 0
	default:
		if r = math.Round(math.Sqrt(lo * hi)); r <= lo || r >= hi {
			return 0 // no whole rate left between them
		}
	}
	return math.Round(r)
}

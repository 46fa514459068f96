package main

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	capsweep "etcdbench/internal/capacity/sweep"
	"etcdbench/internal/etcdload/metrics"
)

// limits are what a real etcd's step must stay within to pass: the
// limits etcd's own docs and tuning guide give its disk histograms
// (/work/shared/ETCD-IO.md: WAL fsync p99 under 10 ms, backend commit
// p99 under 25 ms) and etcdctl check perf's rule on the rate achieved
// (over 90 % of the rate asked for).
type limits struct {
	WALP99      time.Duration `json:"wal_fsync_p99"`
	CommitP99   time.Duration `json:"backend_commit_p99"`
	MinAchieved float64       `json:"min_achieved_fraction"`
}

var defaultLimits = limits{WALP99: 10 * time.Millisecond, CommitP99: 25 * time.Millisecond, MinAchieved: 0.9}

// The histograms a step reads from etcd's /metrics.
const (
	walFsync      = "etcd_disk_wal_fsync_duration_seconds"
	backendCommit = "etcd_disk_backend_commit_duration_seconds"
	processCPU    = "process_cpu_seconds_total"
)

// diskCounters are a block device's counters from /proc/diskstats.
type diskCounters struct {
	Writes       int64 `json:"writes"`
	SectorsWrite int64 `json:"sectors_written"`
	Flushes      int64 `json:"flushes"`
}

// parseDiskstats finds the device major:minor in /proc/diskstats' text:
// "MAJ MIN NAME reads rmerged rsectors rms writes wmerged wsectors wms
// inflight ioms weighted discards dmerged dsectors dms flushes fms".
// Kernels before 5.5 have no flush fields (0 then).
func parseDiskstats(b []byte, dev string) (diskCounters, error) {
	maj, min, _ := strings.Cut(dev, ":")
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) < 11 || f[0] != maj || f[1] != min {
			continue
		}
		n := func(i int) int64 {
			if i >= len(f) {
				return 0
			}
			v, _ := strconv.ParseInt(f[i], 10, 64)
			return v
		}
		return diskCounters{Writes: n(7), SectorsWrite: n(9), Flushes: n(18)}, nil
	}
	return diskCounters{}, fmt.Errorf("/proc/diskstats has no device %s", dev)
}

func (a diskCounters) sub(b diskCounters) diskCounters {
	return diskCounters{Writes: a.Writes - b.Writes, SectorsWrite: a.SectorsWrite - b.SectorsWrite, Flushes: a.Flushes - b.Flushes}
}

// step is one fixed-rate run of etcd's benchmark against a real etcd.
type step struct {
	Offered float64 `json:"offered_puts_per_sec"`
	// Conns and Clients are what benchmark sent with (absent in older
	// results: the params').
	Conns    int     `json:"conns,omitempty"`
	Clients  int     `json:"clients,omitempty"`
	Achieved float64 `json:"achieved_puts_per_sec"` // benchmark's Requests/sec
	Puts     int64   `json:"puts"`
	Errors   int64   `json:"errors"`
	TimedOut bool    `json:"timed_out,omitempty"` // benchmark did not finish in time and was stopped
	// Broken says why benchmark's report is missing or incomplete.
	Broken string `json:"broken,omitempty"`
	// WALP99 and CommitP99 are etcd's own, from its histograms' deltas
	// over the step (NaN when it observed none).
	WALP99    time.Duration `json:"wal_fsync_p99_ns"`
	CommitP99 time.Duration `json:"backend_commit_p99_ns"`
	WALFsyncs float64       `json:"wal_fsyncs"`
	Commits   float64       `json:"backend_commits"`
	// EtcdCPU is the CPU seconds etcd's process used over the step (its
	// process_cpu_seconds_total; 0 when it has none), BenchmarkCPU
	// benchmark's (its rusage): what the CPU side of the estimate
	// models, for each real etcd.
	EtcdCPU      float64 `json:"etcd_cpu_seconds,omitempty"`
	BenchmarkCPU float64 `json:"benchmark_cpu_seconds,omitempty"`
	// Device is the whole device's counters over the step (other
	// processes on the disk included); Cgroup the throttled cgroup's own
	// writes, when the storage has one.
	Device       diskCounters `json:"device"`
	CgroupWrites int64        `json:"cgroup_writes,omitempty"`
	CgroupBytes  int64        `json:"cgroup_bytes,omitempty"`
	Seconds      float64      `json:"seconds"`
	Pass         bool         `json:"pass"`
	Why          string       `json:"why"`
	// Vote: a run of the answer's vote (search.Vote).
	Vote bool `json:"vote,omitempty"`
}

// evidence fills the step's etcd figures from two scrapes of /metrics.
func (s *step) evidence(before, after metrics.Families) {
	p99 := func(name string) (time.Duration, float64) {
		h, ok := metrics.HistogramDelta(before, after, name)
		if !ok || h.Count == 0 {
			return time.Duration(math.MaxInt64), 0
		}
		return time.Duration(metrics.Quantile(0.99, h) * float64(time.Second)), h.Count
	}
	s.WALP99, s.WALFsyncs = p99(walFsync)
	s.CommitP99, s.Commits = p99(backendCommit)
	b, errB := metrics.ValueOf(before, processCPU)
	a, errA := metrics.ValueOf(after, processCPU)
	if errB == nil && errA == nil && a >= b {
		s.EtcdCPU = a - b
	}
}

// judge decides the step, with the reason.
func (s *step) judge(l limits) {
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
		fails = append(fails, fmt.Sprintf("WAL fsync p99 %s >= %v", fmtDur(s.WALP99), l.WALP99))
	}
	if s.CommitP99 >= l.CommitP99 {
		fails = append(fails, fmt.Sprintf("backend commit p99 %s >= %v", fmtDur(s.CommitP99), l.CommitP99))
	}
	s.Pass = len(fails) == 0
	if s.Pass {
		s.Why = fmt.Sprintf("WAL p99 %s, commit p99 %s, %.0f/s achieved", fmtDur(s.WALP99), fmtDur(s.CommitP99), s.Achieved)
	} else {
		s.Why = strings.Join(fails, "; ")
	}
}

func fmtDur(d time.Duration) string {
	if d == time.Duration(math.MaxInt64) {
		return "none observed"
	}
	return fmt.Sprintf("%.1fms", float64(d)/1e6)
}

// search is the bisection of a real etcd's highest passing rate: a
// geometric ladder up (or down) from Start by Factor until a step
// passes and one fails (a failing Start first tries capsweep.UpRungs
// rungs above it), then bisection (geometric means) until the
// lowest failing rate is within Resolution of the highest passing one.
type search struct {
	Start, Factor, Resolution float64
	Min, Max                  float64 // the rates it gives up below and above
	// Confirm repeats a failing step of the climb once, as etcdbench's
	// sweeps do (their confirm rung): the first step, or one above
	// every rate that passed; a repeat that passes overrules the
	// failure (retried). --paired searches so, for the truth and
	// etcdbench's side to differ in how they measure a rate only, not in
	// how they pick the rates.
	Confirm bool
	// Vote judges the search's answer, when it passed at its limit (its
	// WAL or commit p99 in the limit's own histogram bucket), on the
	// majority of capsweep.Windows runs at its rate, as etcdbench's side
	// rechecks its answer's step: a rate that falls takes the answer
	// down to the highest pass below it, judged in turn while
	// capsweep.MaxRechecks runs allow, with no new bisection.
	Vote bool
}

// trial is one rate tried and its verdict.
type trial struct {
	Rate float64
	Pass bool
	// AtLimit: it passed with a p99 in its limit's own bucket (atLimit).
	AtLimit bool
	// Vote: a run of the answer's vote (search.Vote), not of the search.
	Vote bool
}

// atLimit reports whether a step passed with its WAL fsync or backend
// commit p99 in its limit's own histogram bucket (etcd's buckets double
// from 1 ms: over 8 ms for the WAL's 10 ms, over 16 ms for the commits'
// 25 ms), where etcd's histogram does not tell it from the limit.
func atLimit(st step, l limits) bool {
	below := func(limit time.Duration) time.Duration {
		b := time.Millisecond
		for b*2 < limit {
			b *= 2
		}
		return b
	}
	return st.Pass && (st.WALP99 > below(l.WALP99) || st.CommitP99 > below(l.CommitP99))
}

// voting says whether the next run (next) is one of the answer's vote.
func (s search) voting(ts []trial) bool {
	_, vote := s.afterSearch(ts)
	return vote && s.Vote && len(ts) > 0 && (hasVotes(ts) || s.searchNext(ts) == 0)
}

func hasVotes(ts []trial) bool { return slices.ContainsFunc(ts, func(t trial) bool { return t.Vote }) }

// afterSearch is the next rate once the search is done (search.Vote),
// and whether it is a run of a vote, as etcdbench's side goes on
// (capsweep's recheck): the rate under vote until two runs of
// capsweep.Windows (the search's own pass among them) agree; when it
// fell, the highest pass below it if that passed at its limit and the
// runs left allow a whole vote; else, once, the gap between that pass and
// the fallen rate bisected again (runs that are not votes) when the runs
// left allow a vote on its answer, then that answer voted on. 0 when
// done.
func (s search) afterSearch(ts []trial) (float64, bool) {
	var votes []trial
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
		if lo, _ := bounds(ts); s.candidate(ts, votes, lo) {
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
	lo, _ := bounds(ts)
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
	case !slices.ContainsFunc(ts[end:], func(t trial) bool { return t.Vote }): // bisecting
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
func (s search) candidate(ts, votes []trial, rate float64) bool {
	if len(votes)+capsweep.Windows-1 > capsweep.MaxRechecks || slices.ContainsFunc(votes, func(v trial) bool { return v.Rate == rate }) {
		return false
	}
	return slices.ContainsFunc(ts, func(t trial) bool { return t.Rate == rate && t.Pass && t.AtLimit && !t.Vote })
}

// bounds are the highest passing rate below the lowest failing one (0
// when none) and that failing rate (+Inf when none). A rate that passed
// above a failing one (noise) counts for nothing, except above a first
// step that failed: the rungs tried above it (capsweep.UpRungs, as
// etcdbench's sweeps do) that pass overrule the failures below them,
// a light load's wake-ups on a busy machine (lowFloor).
func bounds(ts []trial) (lo, hi float64) {
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
func lowFloor(ts []trial) float64 {
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
// at once (search.Confirm).
func withoutRetried(ts []trial) []trial {
	var out []trial
	for i, t := range ts {
		if !t.Pass && i+1 < len(ts) && ts[i+1].Rate == t.Rate && ts[i+1].Pass {
			continue
		}
		out = append(out, t)
	}
	return out
}

// confirms says whether the last of ts is a failure of the climb to
// repeat (search.Confirm): not itself a repeat, above every other rate
// tried, and every rate below it passed (a first step that failed, and
// the rungs above it, are not the climb's after the first).
func confirms(ts []trial) bool {
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

// next is the rate to try after ts, or 0 when the search (and the
// answer's vote, search.Vote) is done.
func (s search) next(ts []trial) float64 {
	if s.Vote && len(ts) > 0 && (hasVotes(ts) || s.searchNext(ts) == 0) {
		r, _ := s.afterSearch(ts)
		return r
	}
	return s.searchNext(ts)
}

// searchNext is the search's next rate, its vote aside.
func (s search) searchNext(ts []trial) float64 {
	if len(ts) == 0 {
		return math.Round(s.Start)
	}
	if s.Confirm && confirms(ts) {
		return ts[len(ts)-1].Rate
	}
	// A first step that failed: the rungs above it before the descent.
	if up := len(ts) - 1; !ts[0].Pass && up < capsweep.UpRungs && !slices.ContainsFunc(ts, func(t trial) bool { return t.Pass }) {
		if r := math.Round(ts[up].Rate * s.Factor); r <= s.Max {
			return r
		}
	}
	lo, hi := bounds(ts)
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

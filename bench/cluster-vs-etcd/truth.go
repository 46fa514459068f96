package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"etcdbench/bench/internal/cmp"
	"etcdbench/bench/internal/search"
	"etcdbench/internal/etcdload"
	"etcdbench/internal/etcdload/metrics"
	"etcdbench/internal/units"
	"etcdbench/internal/verdict"
)

// latencyLimits are etcdctl check perf's rules on the latency of the
// requests (verdict.CheckPerfDefaults: the slowest at most 0.5 s, the
// stddev at most 0.1 s), judged on benchmark's own figures.
type latencyLimits struct {
	Slowest time.Duration `json:"slowest"`
	Stddev  time.Duration `json:"stddev"`
}

func checkPerfLatency() latencyLimits {
	d := verdict.CheckPerfDefaults()
	return latencyLimits{Slowest: units.FromSeconds(d.Slowest.Limit), Stddev: units.FromSeconds(d.Stddev.Limit)}
}

// leaderChanges is the counter of leader changes a member has seen.
const leaderChanges = "etcd_server_leader_changes_seen_total"

// memberStep is one member's own figures over a step.
type memberStep struct {
	Name      string        `json:"name"`
	WALP99    time.Duration `json:"wal_fsync_p99_ns"` // search.NoneObserved: none
	CommitP99 time.Duration `json:"backend_commit_p99_ns"`
	WALFsyncs float64       `json:"wal_fsyncs"`
	Commits   float64       `json:"backend_commits"`
	// LeaderChanges is how many it saw over the step.
	LeaderChanges float64 `json:"leader_changes,omitempty"`
}

// step is one fixed-rate run of etcd's benchmark against the leader.
type step struct {
	Offered  float64 `json:"offered_puts_per_sec"`
	Conns    int     `json:"conns"`
	Clients  int     `json:"clients"`
	Achieved float64 `json:"achieved_puts_per_sec"` // benchmark's Requests/sec
	Puts     int64   `json:"puts"`
	Errors   int64   `json:"errors"`
	TimedOut bool    `json:"timed_out,omitempty"`
	// Broken says why benchmark's report is missing or incomplete.
	Broken string `json:"broken,omitempty"`
	// P50, P99, Slowest and Stddev are benchmark's, over its requests.
	P50     time.Duration `json:"request_p50_ns"`
	P99     time.Duration `json:"request_p99_ns"`
	Slowest time.Duration `json:"slowest_ns"`
	Stddev  time.Duration `json:"stddev_ns"`
	Members []memberStep  `json:"members"`
	// WALP99 and CommitP99 are the worst member's.
	WALP99    time.Duration `json:"wal_fsync_p99_ns"`
	CommitP99 time.Duration `json:"backend_commit_p99_ns"`
	Seconds   float64       `json:"seconds"`
	Pass      bool          `json:"pass"`
	Why       string        `json:"why"`
	Vote      bool          `json:"vote,omitempty"` // a run of the answer's vote
}

// evidence fills the members' figures from their /metrics before and
// after the step, and the worst of them.
func (s *step) evidence(names []string, before, after []metrics.Families) {
	s.WALP99, s.CommitP99 = 0, 0
	for i := range before {
		m := memberStep{Name: names[i]}
		m.WALP99, m.WALFsyncs = search.P99(before[i], after[i], search.WALFsync)
		m.CommitP99, m.Commits = search.P99(before[i], after[i], search.BackendCommit)
		b, errB := metrics.ValueOf(before[i], leaderChanges)
		a, errA := metrics.ValueOf(after[i], leaderChanges)
		if errB == nil && errA == nil && a > b {
			m.LeaderChanges = a - b
		}
		s.WALP99, s.CommitP99 = max(s.WALP99, m.WALP99), max(s.CommitP99, m.CommitP99)
		s.Members = append(s.Members, m)
	}
}

// judge decides the step, with the reason: search's limits on every
// member, check perf's on the latency.
func (s *step) judge(l search.Limits, lat latencyLimits) {
	fails := l.Failures(search.Step{Offered: s.Offered, Achieved: s.Achieved, Errors: s.Errors, Broken: s.Broken, WALP99: s.WALP99, CommitP99: s.CommitP99})
	if s.Slowest > lat.Slowest {
		fails = append(fails, fmt.Sprintf("slowest request %s > %v", search.FmtDur(s.Slowest), lat.Slowest))
	}
	if s.Stddev > lat.Stddev {
		fails = append(fails, fmt.Sprintf("stddev %s > %v", search.FmtDur(s.Stddev), lat.Stddev))
	}
	s.Pass = len(fails) == 0
	var wal, commit []string
	for _, m := range s.Members {
		wal, commit = append(wal, search.FmtDur(m.WALP99)), append(commit, search.FmtDur(m.CommitP99))
	}
	members := fmt.Sprintf("members' WAL p99 %s, commit p99 %s", strings.Join(wal, "/"), strings.Join(commit, "/"))
	if s.Pass {
		s.Why = fmt.Sprintf("%.0f/s achieved, p99 %s, slowest %s; %s", s.Achieved, search.FmtDur(s.P99), search.FmtDur(s.Slowest), members)
	} else {
		s.Why = strings.Join(fails, "; ") + "; " + members
	}
}

// stepper runs fixed-rate steps of etcd's benchmark against a cluster's
// leader, check perf's clients and connections at each rate.
type stepper struct {
	benchmark        string
	keySize, valSize int
	dur              time.Duration
	lim              search.Limits
	lat              latencyLimits
	// all sends to every member's endpoint (benchmark's clients spread
	// over them), not only the leader's.
	all bool
}

// run offers rate puts/s to the leader for s.dur and judges the step from
// benchmark's summary and every member's /metrics.
func (s stepper) run(ctx context.Context, c *cluster, leader int, rate float64) (step, error) {
	st := step{Offered: rate}
	before, err := c.scrape(ctx)
	if err != nil {
		return st, err
	}
	p := etcdload.CheckPresetAt(rate)
	st.Conns, st.Clients = p.Conns, p.Clients
	ep := c.members[leader].URL
	if s.all {
		var urls []string
		for _, m := range c.members {
			urls = append(urls, m.URL)
		}
		ep = strings.Join(urls, ",")
	}
	put := cmp.RatePut{Endpoint: ep, Conns: st.Conns, Clients: st.Clients, Rate: rate, Dur: s.dur, KeySize: s.keySize, ValSize: s.valSize}
	pr, err := cmp.RunRatePut(ctx, s.benchmark, put)
	if err != nil {
		return st, err
	}
	st.Seconds, st.TimedOut, st.Broken = pr.Wall.Seconds(), pr.TimedOut, pr.Broken
	if pr.TimedOut {
		st.Puts = put.Total()
	} else {
		rep := pr.Report
		st.Achieved, st.Puts, st.Errors = rep.OpsPerSec, rep.Requests, rep.Errors
		st.P50, st.P99, st.Slowest, st.Stddev = rep.Percentiles[50], rep.Percentiles[99], rep.Slowest, rep.Stddev
	}
	after, err := c.scrape(ctx)
	if err != nil {
		return st, err
	}
	st.evidence(c.names, before, after)
	st.judge(s.lim, s.lat)
	return st, nil
}

// truth is the highest rate a real cluster passed, searched on its
// leader.
type truth struct {
	Leader      string  `json:"leader"`
	HighestPass float64 `json:"highest_pass"` // 0: none passed
	LowestFail  float64 `json:"lowest_fail"`  // 0: none failed
	// P99 is benchmark's 99 % line at HighestPass (its last passing run
	// there); 0 when none passed.
	P99   time.Duration `json:"request_p99_ns"`
	Steps []step        `json:"steps"`
	Wall  float64       `json:"wall_s"`
}

// searchOn searches c's highest passing rate on its leader.
func searchOn(ctx context.Context, c *cluster, s stepper, srch search.Search, progress io.Writer) (truth, error) {
	start := time.Now()
	var t truth
	leader, err := c.leader(ctx)
	if err != nil {
		return t, err
	}
	t.Leader = c.names[leader]
	ts, err := srch.Run(ctx, func(ctx context.Context, r float64, vote bool) (bool, bool, error) {
		st, err := s.run(ctx, c, leader, r)
		if err != nil {
			return false, false, err
		}
		st.Vote = vote
		t.Steps = append(t.Steps, st)
		verdict := "FAIL"
		if st.Pass {
			verdict = "pass"
		}
		if vote {
			verdict += " (vote)"
		}
		fmt.Fprintf(progress, "    truth %6.0f puts/s: %s (%s)\n", r, verdict, st.Why)
		return st.Pass, st.Pass && s.lim.AtLimit(st.WALP99, st.CommitP99), nil
	})
	t.Wall = time.Since(start).Seconds()
	if err != nil {
		return t, err
	}
	lo, hi := search.Bounds(ts)
	t.HighestPass = lo
	if !math.IsInf(hi, 1) {
		t.LowestFail = hi
	}
	t.P99 = t.p99At(lo)
	return t, nil
}

// p99At is benchmark's 99 % line of the last passing step at rate (0:
// none).
func (t truth) p99At(rate float64) time.Duration {
	for i := len(t.Steps) - 1; i >= 0; i-- {
		if st := t.Steps[i]; st.Pass && st.Offered == rate {
			return st.P99
		}
	}
	return 0
}

package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"testing"
	"time"

	"etcdbench/bench/internal/cmp"
	"etcdbench/bench/internal/cmp/cmptest"
	"etcdbench/bench/internal/search"
	"etcdbench/internal/etcdload/metrics"
)

func TestParseFlags(t *testing.T) {
	o, err := parseFlags(nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	want := []time.Duration{0, 2 * time.Millisecond, 10 * time.Millisecond, 50 * time.Millisecond, 120 * time.Millisecond}
	if fmt.Sprint(o.RTTs) != fmt.Sprint(want) || o.Rounds != 3 || o.Step != 10*time.Second || o.Start != 150 || len(o.Sides) != 3 || o.SideStep != "" ||
		o.Latency.Slowest != 500*time.Millisecond || o.Latency.Stddev != 100*time.Millisecond {
		t.Errorf("defaults %+v", o.params)
	}
	if o, err := parseFlags([]string{"--rounds", "1", "--rtts", "0,50ms", "--sides", "truth", "--side-step", "5s"}, io.Discard); err != nil || len(o.RTTs) != 2 || o.Sides[0] != sideTruth || o.SideStep != "5s" {
		t.Errorf("%+v, %v", o.params, err)
	}
	for _, args := range [][]string{{"--rtts", "-2ms"}, {"--rtts", "far"}, {"--sides", "fio"}, {"--sides", ""}, {"--step", "10ms"},
		{"--side-step", "soon"}, {"--start", "1"}, {"--rounds", "0"}, {"extra"}} {
		if _, err := parseFlags(args, io.Discard); !errors.As(err, new(cmp.UsageError)) {
			t.Errorf("%v: %v, want a usage error", args, err)
		}
	}
}

// The result of `etcd capacity --members 3 --peer-rtt 0,50ms`, as the
// lead's contract has it: a workload a round trip, capacity.cluster
// saying which.
const clusterReport = `note: printed before the report
{"workloads": [
 {"name": "etcd-capacity", "capacity": {"rate": 900, "cluster": {"members": 3, "peer_rtt_ns": 0, "rate": 900, "upper": 990, "request_p99_ns": 8000000, "machines": {"rate": 1500}}}},
 {"name": "etcd-capacity", "capacity": {"rate": 300, "upper": 330, "cluster": {"members": 3, "peer_rtt_ns": 50000000, "rate": 300, "upper": 330, "request_p99_ns": 61000000, "machines": {"rate": 310}}}}
]}`

// Today's results: no cluster answer.
const (
	etcdCapacityReport = `{"workloads": [{"name": "etcd-capacity", "capacity": {"rate": 400, "upper": 440, "steps": [
  {"rate": 150, "status": "PASS", "commit_p99_ns": 5000000},
  {"rate": 400, "status": "PASS", "commit_p99_ns": 9000000},
  {"rate": 800, "status": "FAIL", "commit_p99_ns": 90000000},
  {"rate": 400, "status": "FAIL", "commit_p99_ns": 30000000},
  {"rate": 400, "status": "WARN", "commit_p99_ns": 11000000},
  {"rate": 440, "status": "FAIL", "commit_p99_ns": 40000000}]}}]}`
	capacityReport = `{"workloads": [
 {"name": "capacity", "capacity": {"rate": 5000, "upper": 5500, "etcd": {"rate": 1200, "upper": 1300}, "steps": [{"rate": 5000, "status": "PASS", "commit_p99_ns": 1000000}]}},
 {"name": "cpu-capacity", "capacity": {"rate": 1200, "steps": [{"rate": 1200, "status": "PASS", "commit_p99_ns": 7000000}, {"rate": 1300, "status": "FAIL", "commit_p99_ns": 70000000}]}}]}`
)

func TestParseSide(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		rtt      time.Duration
		want     sideAnswer
		err      string
	}{
		{"the cluster's answer at 50ms", clusterReport, 50 * time.Millisecond,
			sideAnswer{Rate: 300, Upper: 330, P99: 61 * time.Millisecond, Machines: 310, From: "capacity.cluster"}, ""},
		{"the cluster's answer at 0", clusterReport, 0,
			sideAnswer{Rate: 900, Upper: 990, P99: 8 * time.Millisecond, Machines: 1500, From: "capacity.cluster"}, ""},
		{"no cluster at this round trip", clusterReport, 10 * time.Millisecond, sideAnswer{}, "none of 3 members 10ms apart"},
		{"etcd capacity without a cluster answer: its last passing step at its rate", etcdCapacityReport, 0,
			sideAnswer{Rate: 400, Upper: 440, P99: 11 * time.Millisecond, From: "capacity.rate (no capacity.cluster)"}, ""},
		{"capacity without a cluster answer: its estimate, the p99 from cpu-capacity's steps", capacityReport, 0,
			sideAnswer{Rate: 1200, Upper: 1300, P99: 7 * time.Millisecond, From: "capacity.etcd.rate (no capacity.cluster)"}, ""},
		{"no capacity", `{"workloads": [{"name": "put"}]}`, 0, sideAnswer{}, "no capacity"},
		{"not JSON", "panic: boom", 0, sideAnswer{}, "no JSON"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseSide([]byte(tc.in), 3, tc.rtt)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Errorf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || got.Rate != tc.want.Rate || got.Upper != tc.want.Upper || got.P99 != tc.want.P99 || got.Machines != tc.want.Machines || got.From != tc.want.From {
				t.Errorf("got %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
	if _, err := parseSide([]byte(clusterReport), 5, 0); err == nil {
		t.Error("a 5-member question answered by 3-member clusters: no error")
	}
}

func TestSideArgs(t *testing.T) {
	got := strings.Join(sideArgs(sideEtcdCapacity, "/d", 3, 50*time.Millisecond, "5s"), " ")
	if got != "etcd capacity --dir /d --members 3 --peer-rtt 50ms --no-progress -o json --step 5s" {
		t.Errorf("etcd capacity: %s", got)
	}
	got = strings.Join(sideArgs(sideCapacity, "/d", 3, 0, "5s"), " ")
	if got != "capacity --dir /d --members 3 --peer-rtt 0s --no-progress -o json" {
		t.Errorf("capacity: %s", got)
	}
}

func TestJudge(t *testing.T) {
	ok := step{Offered: 300, Achieved: 299, P99: 60 * time.Millisecond, Slowest: 120 * time.Millisecond, Stddev: 10 * time.Millisecond,
		Members: []memberStep{{Name: "m1", WALP99: 2 * time.Millisecond, CommitP99: 8 * time.Millisecond}, {Name: "m2", WALP99: 3 * time.Millisecond, CommitP99: 9 * time.Millisecond}},
		WALP99:  3 * time.Millisecond, CommitP99: 9 * time.Millisecond}
	for _, tc := range []struct {
		name string
		mod  func(*step)
		pass bool
		why  string
	}{
		{"within every limit", func(*step) {}, true, "members' WAL p99 2.0ms/3.0ms"},
		{"a slow request", func(s *step) { s.Slowest = 600 * time.Millisecond }, false, "slowest request 600.0ms > 500ms"},
		{"a wide spread", func(s *step) { s.Stddev = 150 * time.Millisecond }, false, "stddev 150.0ms > 100ms"},
		{"a member's slow WAL", func(s *step) { s.WALP99 = 12 * time.Millisecond }, false, "WAL fsync p99 12.0ms >= 10ms"},
		{"the rate not reached", func(s *step) { s.Achieved = 250 }, false, "achieved 250/s < 90% of 300/s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := ok
			tc.mod(&s)
			s.judge(search.DefaultLimits, checkPerfLatency())
			if s.Pass != tc.pass || !strings.Contains(s.Why, tc.why) {
				t.Errorf("pass %v (%s), want %v with %q", s.Pass, s.Why, tc.pass, tc.why)
			}
		})
	}
}

// The step's WAL and commit p99s are the worst member's; a member that
// saw the leader change says so.
func TestEvidence(t *testing.T) {
	parse := func(s string) metrics.Families { return cmptest.Metrics(t, s) }
	changes := func(n int) string { return fmt.Sprintf("# TYPE %s counter\n%s %d\n", leaderChanges, leaderChanges, n) }
	zero := cmptest.PromHist(search.WALFsync, 0, 0, 0, 0, 0, 0, 0) + cmptest.PromHist(search.BackendCommit, 0, 0, 0, 0, 0, 0, 0)
	before := []metrics.Families{parse(zero + changes(1)), parse(zero + changes(1))}
	after := []metrics.Families{
		parse(cmptest.PromHist(search.WALFsync, 100, 100, 100, 100, 100, 100, 100) + cmptest.PromHist(search.BackendCommit, 10, 10, 10, 10, 10, 10, 10) + changes(1)),
		parse(cmptest.PromHist(search.WALFsync, 0, 0, 0, 50, 100, 100, 100) + cmptest.PromHist(search.BackendCommit, 0, 10, 10, 10, 10, 10, 10) + changes(2)),
	}
	var s step
	s.evidence([]string{"m1", "m2"}, before, after)
	if len(s.Members) != 2 || s.Members[1].LeaderChanges != 1 || s.Members[0].LeaderChanges != 0 || s.Members[0].WALFsyncs != 100 {
		t.Errorf("members %+v", s.Members)
	}
	if s.WALP99 != s.Members[1].WALP99 || s.WALP99 < 8*time.Millisecond || s.CommitP99 != s.Members[1].CommitP99 {
		t.Errorf("worst WAL p99 %v, commit p99 %v; members %+v", s.WALP99, s.CommitP99, s.Members)
	}
}

// at is a round's measurement at rtt: the truth's rate and p99, and each
// side's (a negative rate: that side failed, a note).
func at(n int, rtt time.Duration, truthRate float64, truthP99 time.Duration, ecRate float64, ecP99 time.Duration, capRate float64, capP99 time.Duration) measurement {
	m := measurement{Round: n, RTT: rtt, Truth: &truth{HighestPass: truthRate, P99: truthP99}}
	if ecRate >= 0 {
		m.EtcdCapacity = &sideAnswer{Rate: ecRate, P99: ecP99, Machines: 2 * ecRate}
	}
	if capRate >= 0 {
		m.Capacity = &sideAnswer{Rate: capRate, P99: capP99}
	} else {
		m.Notes = append(m.Notes, "capacity: unknown flag: --members")
	}
	return m
}

func TestSummarize(t *testing.T) {
	ms := time.Millisecond
	r50 := 50 * ms
	in := []measurement{
		at(1, 0, 1000, 8*ms, 1100, 9*ms, 600, 4*ms),
		at(1, r50, 300, 60*ms, 320, 62*ms, -1, 0),
		at(2, r50, 150, 58*ms, 300, 61*ms, -1, 0),
		at(2, 0, 1200, 9*ms, 1100, 9*ms, 700, 4*ms),
		at(3, 0, 1100, 8*ms, 1000, 8*ms, 650, 5*ms),
		at(3, r50, 300, 61*ms, 330, 62*ms, -1, 0),
	}
	sum := summarize(in, []time.Duration{0, r50, 120 * ms}, 1.25)
	if len(sum) != 3 || sum[0].Rounds != 3 || sum[2].Rounds != 0 || len(sum[2].Sides) != 0 {
		t.Fatalf("summary %+v", sum)
	}
	z := sum[0]
	if z.TruthRate.Median != 1100 || z.TruthRate.Min != 1000 || z.TruthRate.Max != 1200 || math.Abs(float64(z.TruthP99.Median)-0.008) > 1e-12 {
		t.Errorf("truth at 0: %+v %+v", z.TruthRate, z.TruthP99)
	}
	ec, cp := z.Sides[0], z.Sides[1]
	if ec.Side != sideEtcdCapacity || ec.Rounds != 3 || !ec.RateWithin || !ec.P99Within || !ec.Met || ec.Machines.Median != 2200 {
		t.Errorf("etcd capacity at 0: %+v", ec)
	}
	if cp.Side != sideCapacity || cp.RateWithin || cp.P99Within || cp.Met || !math.IsNaN(float64(cp.Machines.Median)) {
		t.Errorf("capacity at 0 (0.6x the rate, 0.5x the p99): %+v", cp)
	}
	// At 50 ms: the side's ratios 320/300, 300/150, 330/300; capacity
	// failed every round: no row, three notes.
	f := sum[1]
	if len(f.Sides) != 1 || len(f.Notes) != 3 || !strings.HasPrefix(f.Notes[0], "round 1: capacity:") {
		t.Fatalf("50ms: %+v", f)
	}
	if s := f.Sides[0]; math.Abs(float64(s.RateRatio.Median)-1.1) > 1e-9 || s.RateRatio.Max != 2 || !s.RateWithin || !s.Met {
		t.Errorf("50ms etcd capacity: %+v", s)
	}
	var out strings.Builder
	printTable(&out, sum, 1.25)
	for _, want := range []string{"50ms        3       300 (150-300)", "etcd capacity: goal met at 2 of 2 round trips", "capacity: goal met at 0 of 1 round trips", "50ms round 1: capacity: unknown flag"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}
	fs := figures(sum)
	if fs["rtt_0s_etcd_capacity_within_goal"] != 1 || fs["rtt_50ms_truth_rate"] != 300 || fs["goals_met"] != 2 || fs["rtt_0s_capacity_p99_ratio_max"] != 0.625 {
		t.Errorf("figures %v", fs)
	}
	if _, ok := fs["rtt_0s_capacity_machines"]; ok {
		t.Error("a figure with no value (capacity's machines) is written")
	}
}

// The ratios' rules: neither carried a rate, they agree; only the side
// did, +Inf; no p99 on either side, nothing to compare.
func TestRatios(t *testing.T) {
	if r := rateRatio(0, 0); r != 1 {
		t.Errorf("0/0 = %v, want 1", r)
	}
	if r := rateRatio(150, 0); !math.IsInf(r, 1) {
		t.Errorf("150/0 = %v, want +Inf", r)
	}
	if r := p99Ratio(0, time.Millisecond); !math.IsNaN(r) {
		t.Errorf("no side p99: %v, want NaN", r)
	}
	if !within(1.25, 1.25) || !within(0.8, 1.25) || within(0.79, 1.25) || within(math.NaN(), 1.25) {
		t.Error("within's bounds")
	}
}

// Neither side carried a rate: the rates agree, and there is no p99 to
// hold to the goal ("n/a", not a miss).
func TestNothingCarried(t *testing.T) {
	rtt := 120 * time.Millisecond
	sum := summarize([]measurement{at(1, rtt, 0, 0, 0, 0, -1, 0)}, []time.Duration{rtt}, 1.25)
	var out strings.Builder
	printTable(&out, sum, 1.25)
	if s := sum[0].Sides[0]; !s.RateWithin || s.P99Within || s.Met || !strings.Contains(out.String(), "yes, n/a") {
		t.Errorf("%+v\n%s", s, out.String())
	}
}

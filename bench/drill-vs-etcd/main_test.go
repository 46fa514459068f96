package main

import (
	"bytes"
	"errors"
	"io"
	"math"
	"strings"
	"testing"
	"time"

	"etcdbench/bench/internal/cmp"
)

func TestParseFlags(t *testing.T) {
	o, err := parseFlags(nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Profiles) != 2 || o.Profiles[1] != namedProfiles["slow"] || len(o.Faults) != 4 || o.DBSize != 100<<20 || o.PreVote || len(o.Sides) != 2 || o.Rate != 150 || o.Clients != 50 ||
		o.KeySize != 256 || o.ValSize != 1024 || o.FaultFor != 10*time.Second || o.RequestTimeout != 5*time.Second || o.Rounds != 3 {
		t.Errorf("defaults %+v", o.params)
	}
	o, err = parseFlags([]string{"--rounds", "1", "--profiles", "200/2000", "--faults", "stop-leader", "--sides", "truth"}, io.Discard)
	if err != nil || o.Profiles[0].Heartbeat != 200*time.Millisecond || o.Profiles[0].Election != 2*time.Second || o.Faults[0] != faultStop || len(o.Sides) != 1 {
		t.Errorf("%+v, %v", o.params, err)
	}
	for _, args := range [][]string{{"--profiles", "fast"}, {"--profiles", "100/300"}, {"--profiles", ""}, {"--faults", "move-leader"},
		{"--sides", "fio"}, {"--db-size", "1k"}, {"--db-size", "lots"}, {"--request-timeout", "100ms"}, {"--fault-for", "0s"}, {"--rate", "0"}, {"--rounds", "0"}, {"extra"}} {
		if _, err := parseFlags(args, io.Discard); !errors.As(err, new(cmp.UsageError)) {
			t.Errorf("%v: %v, want a usage error", args, err)
		}
	}
}

// puts builds a probe log from (due ms from the fault, latency ms,
// failed) triples.
func puts(at time.Time, ps ...[3]int) []put {
	var out []put
	for _, p := range ps {
		due := at.Add(time.Duration(p[0]) * time.Millisecond)
		r := put{Due: due, Done: due.Add(time.Duration(p[1]) * time.Millisecond)}
		if p[2] != 0 {
			r.Err = "context deadline exceeded"
		}
		out = append(out, r)
	}
	return out
}

func TestFindOutage(t *testing.T) {
	at := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	ms := func(x int) time.Time { return at.Add(time.Duration(x) * time.Millisecond) }
	for _, tc := range []struct {
		name       string
		puts       []put
		start, end time.Time
		lateUntil  time.Time
		open       bool
		failed     int
		slow       int
	}{
		{"nothing late", puts(at, [3]int{-20, 5, 0}, [3]int{0, 5, 0}, [3]int{10, 5, 0}), time.Time{}, time.Time{}, time.Time{}, false, 0, 0},
		{"a failed put, then one in time", puts(at, [3]int{0, 5, 0}, [3]int{10, 5000, 1}, [3]int{20, 900, 0}, [3]int{30, 5, 0}),
			ms(10), ms(35), ms(5010), false, 1, 1},
		// A put due 0.3 s before the fault, still in flight when it
		// struck, counts from the fault; one due 0.6 s before does not.
		{"caught in flight", puts(at, [3]int{-600, 2000, 0}, [3]int{-300, 1000, 0}, [3]int{0, 5, 0}),
			at, ms(5), ms(700), false, 0, 1},
		// Late before the fault but done before it: not the fault's.
		{"late but over before the fault", puts(at, [3]int{-400, 10, 1}, [3]int{10, 700, 0}, [3]int{20, 5, 0}),
			ms(10), ms(25), ms(710), false, 0, 1},
		// Out of order in the log, the in-time put that ends it due
		// after the first late one, not merely logged after it.
		{"sorted by due time", puts(at, [3]int{40, 5, 0}, [3]int{10, 3000, 1}, [3]int{0, 2, 0}, [3]int{20, 700, 0}),
			ms(10), ms(45), ms(3010), false, 1, 1},
		{"never recovered", puts(at, [3]int{0, 5000, 1}, [3]int{10, 5000, 1}),
			at, ms(5010), ms(5010), true, 2, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := findOutage(tc.puts, at, 500*time.Millisecond)
			if !o.Start.Equal(tc.start) || !o.End.Equal(tc.end) || !o.LateUntil.Equal(tc.lateUntil) || o.Open != tc.open || o.Failed != tc.failed || o.Slow != tc.slow {
				t.Errorf("got %+v\nwant start %v end %v late until %v open %v failed %d slow %d", o, tc.start, tc.end, tc.lateUntil, tc.open, tc.failed, tc.slow)
			}
			want := 0.0
			if !tc.start.IsZero() {
				want = tc.end.Sub(tc.start).Seconds()
			}
			if o.Seconds() != want {
				t.Errorf("seconds %g, want %g", o.Seconds(), want)
			}
		})
	}
}

func TestLongestOutage(t *testing.T) {
	at := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	// Before the heal at 0: ignored. After it: a run of one late put
	// (0.2 s to the next in-time completion), then one of three (from
	// 100 ms to 1.4 s), then a late put no in-time one followed.
	ps := puts(at, [3]int{-100, 5000, 1}, [3]int{0, 5, 0}, [3]int{10, 600, 0}, [3]int{20, 190, 0},
		[3]int{100, 900, 0}, [3]int{110, 5000, 1}, [3]int{120, 800, 0}, [3]int{1390, 10, 0}, [3]int{1500, 700, 0})
	if got := longestOutage(ps, at, 500*time.Millisecond); math.Abs(got-1.3) > 1e-9 {
		t.Errorf("longest %g s, want 1.3", got)
	}
	if got := longestOutage(ps[:2], at, 500*time.Millisecond); got != 0 {
		t.Errorf("nothing late after the heal: %g", got)
	}
}

const drillReport = `note: printed before the report
{"workloads": [
 {"name": "drill-kill-leader", "drill": {"fault": "kill-leader", "outage_seconds": 1.2, "new_leader_seconds": 1.1, "failed_requests": 30, "restart_seconds": 0.4,
   "runs": [{"fault": "kill-leader", "outage_seconds": 1.2, "new_leader_seconds": 1.1, "failed_requests": 30, "restart_seconds": 0.4}]}},
 {"name": "drill-stop-leader", "drill": {"fault": "stop-leader", "runs": [{"fault": "stop-leader", "outage_seconds": 2, "new_leader_seconds": null}]}}
]}`

const defragReport = `{"workloads": [{"name": "drill-defrag-leader", "drill": {"fault": "defrag-leader", "outage_seconds": 0.02, "new_leader_seconds": 0,
 "outage_after_end_seconds": 0.1, "defrag_seconds": 0.61, "db_size_bytes": 106000000, "late_until_seconds": 0.65, "p99_during_seconds": 0.7, "runs": []}}]}`

func TestParseSide(t *testing.T) {
	s, err := parseSide([]byte(drillReport), faultKill)
	if err != nil || s.OutageSeconds != 1.2 || s.NewLeaderSeconds != 1.1 || s.RestartSeconds != 0.4 || s.FailedRequests != 30 || s.From != ".drill" {
		t.Errorf("kill-leader: %+v, %v", s, err)
	}
	s, err = parseSide([]byte(drillReport), faultStop)
	if err != nil || s.OutageSeconds != 2 || !math.IsNaN(float64(s.NewLeaderSeconds)) || !math.IsNaN(float64(s.RestartSeconds)) || s.From != ".drill.runs[0]" {
		t.Errorf("stop-leader from its one run: %+v, %v", s, err)
	}
	for fault, in := range map[string]string{
		faultPartition:   drillReport,
		faultKill + " ":  `{"workloads": [{"name": "drill-kill-leader "}]}`,
		faultStop + "  ": "Error: unknown command \"drill\" for \"etcdbench\"",
	} {
		if _, err := parseSide([]byte(in), strings.TrimSpace(fault)); err == nil {
			t.Errorf("%s: no error for %q", fault, in)
		}
	}
	args := strings.Join(sideArgs("/d", faultStop, namedProfiles["slow"], options{params: params{Rate: 150, Clients: 50, FaultFor: 10 * time.Second,
		Before: 5 * time.Second, After: 5 * time.Second, RequestTimeout: 5 * time.Second}}), " ")
	if args != "drill --dir /d --faults stop-leader --rounds 1 --rate 150 --clients 50 --fault-for 10s --before 5s --after 5s --request-timeout 5s --heartbeat-interval 500ms --election-timeout 2500ms --pre-vote=false --no-progress -o json" {
		t.Errorf("args: %s", args)
	}
	// With --pre-vote etcdbench runs as it does by default; defrag-leader
	// fills its db to --db-size.
	args = strings.Join(sideArgs("/d", faultDefrag, namedProfiles["default"], options{params: params{Rate: 150, Clients: 50, FaultFor: 10 * time.Second,
		Before: 5 * time.Second, After: 5 * time.Second, RequestTimeout: 5 * time.Second, PreVote: true, DBSize: 100 << 20}}), " ")
	if args != "drill --dir /d --faults defrag-leader --rounds 1 --rate 150 --clients 50 --fault-for 10s --before 5s --after 5s --request-timeout 5s --heartbeat-interval 100ms --election-timeout 1000ms --db-size 104857600 --no-progress -o json" {
		t.Errorf("args: %s", args)
	}
	s, err = parseSide([]byte(defragReport), faultDefrag)
	if err != nil || s.OutageSeconds != 0.02 || s.NewLeaderSeconds != 0 || s.DefragSeconds != 0.61 || s.DBSizeBytes != 106000000 || s.AfterEndOutage != 0.1 || s.P99During != 0.7 || s.LateUntil != 0.65 {
		t.Errorf("defrag-leader: %+v, %v", s, err)
	}
}

func TestCutRules(t *testing.T) {
	got := cutRules("drill-vs-etcd-7", 2380, "drill-vs-etcd-7/m1", []int{2381, 2382})
	want := `*filter
-A drill-vs-etcd-7 -p tcp --dport 2380 -j DROP
-A drill-vs-etcd-7 -p tcp --sport 2380 -j DROP
-A drill-vs-etcd-7 -p tcp -m multiport --dports 2381,2382 -m cgroup --path drill-vs-etcd-7/m1 -j CONNMARK --set-xmark 0x10000000/0x10000000
-A drill-vs-etcd-7 -m connmark --mark 0x10000000/0x10000000 -j DROP
COMMIT
`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// truthOf is a truth of outage and new leader seconds.
func truthOf(outage, leader, restart float64) *truthRun {
	return &truthRun{OutageSeconds: outage, NewLeaderSeconds: cmp.JSONFloat(leader), RestartSeconds: cmp.JSONFloat(restart), Outage: outage0(3),
		DefragSeconds: cmp.JSONFloat(math.NaN()), P99During: 5}
}

func outage0(failed int) outage { return outage{Failed: failed} }

func sideOf(outage, leader, restart float64) *sideRun {
	nan := cmp.JSONFloat(math.NaN())
	return &sideRun{OutageSeconds: cmp.JSONFloat(outage), NewLeaderSeconds: cmp.JSONFloat(leader), RestartSeconds: cmp.JSONFloat(restart),
		DefragSeconds: nan, DBSizeBytes: nan, P99During: 5, LateUntil: 6, Elections: 1}
}

// defragOf is a defrag-leader truth and etcdbench's answer: the leader
// kept its place, its clients waited the defragmentation.
func defragOf(outage, defrag, afterEnd float64) (*truthRun, *sideRun) {
	t := truthOf(outage, 0, math.NaN())
	t.DefragSeconds, t.DBSizeBytes, t.AfterEndOutage, t.P99During, t.LateUntil = cmp.JSONFloat(defrag), 105<<20, afterEnd, cmp.JSONFloat(defrag), defrag
	s := sideOf(outage, 0, math.NaN())
	s.DefragSeconds, s.DBSizeBytes, s.AfterEndOutage = cmp.JSONFloat(defrag*2), 106<<20, cmp.JSONFloat(afterEnd)
	return t, s
}

func TestSummaryTable(t *testing.T) {
	def, slow := namedProfiles["default"], namedProfiles["slow"]
	nan := math.NaN()
	ms := []measurement{
		// default kill-leader: within 1.5x.
		{Round: 1, Profile: "default", Fault: faultKill, Truth: truthOf(1.0, 0.9, 0.1), Etcdbench: sideOf(1.2, 1.0, 0.3)},
		{Round: 2, Profile: "default", Fault: faultKill, Truth: truthOf(2.0, 1.0, 0.2), Etcdbench: sideOf(1.5, 1.2, 0.2)},
		{Round: 3, Profile: "default", Fault: faultKill, Truth: truthOf(1.2, 1.1, 0.1), Etcdbench: sideOf(1.3, 1.1, 0.1)},
		// default stop-leader: the outage 3x, but within 0.5 s; the new
		// leader 2x and 1 s off: not met.
		{Round: 1, Profile: "default", Fault: faultStop, Truth: truthOf(0.1, 1.0, nan), Etcdbench: sideOf(0.3, 2.0, nan)},
		{Round: 2, Profile: "default", Fault: faultStop, Truth: truthOf(0.1, 1.0, nan), Etcdbench: sideOf(0.3, 2.0, nan)},
		{Round: 3, Profile: "default", Fault: faultStop, Truth: truthOf(0.1, 1.0, nan), Etcdbench: sideOf(0.3, 2.0, nan)},
		// slow kill-leader: etcdbench failed every round.
		{Round: 1, Profile: "slow", Fault: faultKill, Truth: truthOf(3, 3, 0.1), Notes: []string{"etcdbench: unknown command \"drill\""}},
		{Round: 2, Profile: "slow", Fault: faultKill, Truth: truthOf(4, 3.5, 0.1)},
	}
	// default defrag-leader: the leader kept its place on both sides.
	for n, x := range [][3]float64{{0.6, 0.6, 0}, {0, 0.4, 0}, {0.7, 0.7, 1.5}} {
		tr, sd := defragOf(x[0], x[1], x[2])
		ms = append(ms, measurement{Round: n + 1, Profile: "default", Fault: faultDefrag, Truth: tr, Etcdbench: sd})
	}
	rows := summarize(ms, []profile{def, slow}, []string{faultKill, faultStop, faultDefrag}, goal{Ratio: 1.5, Abs: 500 * time.Millisecond})
	if len(rows) != 6 {
		t.Fatalf("%d rows, want 6", len(rows))
	}
	if d := rows[2]; !d.Met || d.SideDefrag == nil || d.SideRestart != nil || float64(d.Defrag.Median) != 0.6 || float64(d.SideDefrag.Ratio.Median) != 2 ||
		float64(d.NewLeader.Median) != 0 || float64(d.DBSize.Median) != 105<<20 || float64(d.AfterEnd.Max) != 1.5 || float64(d.SideAfterEnd.Ratio.Median) != 1 {
		t.Errorf("default defrag-leader: %+v", d)
	}
	k := rows[0]
	if k.Rounds != 3 || k.Paired != 3 || float64(k.Outage.Median) != 1.2 || float64(k.Outage.Min) != 1 || float64(k.Outage.Max) != 2 ||
		math.Abs(float64(k.SideOutage.Ratio.Median)-1.0833) > 1e-3 || float64(k.SideOutage.Ratio.Min) != 0.75 || !k.Met || k.SideRestart == nil {
		t.Errorf("default kill-leader: %+v, outage %+v", k, *k.SideOutage)
	}
	s := rows[1]
	if !s.SideOutage.Met || s.SideNewLeader.Met || s.Met || math.Abs(float64(s.SideOutage.Ratio.Median)-3) > 1e-9 || s.SideRestart != nil || s.Restart.N != 0 {
		t.Errorf("default stop-leader: %+v", s)
	}
	if rows[3].Rounds != 2 || rows[3].Paired != 0 || rows[3].SideOutage != nil || len(rows[3].Notes) != 1 || rows[4].Rounds != 0 {
		t.Errorf("slow: %+v / %+v", rows[3], rows[4])
	}
	var b bytes.Buffer
	printTable(&b, rows, goal{Ratio: 1.5, Abs: 500 * time.Millisecond})
	out := b.String()
	for _, want := range []string{
		"default  kill-leader    3             1.20 (1.00-2.00)  1.30 (1.20-1.50)    1.08 (0.75-1.20)  0.00               0.00                   1.00   1.00 (0.90-1.10)    1.10 (1.00-1.20)        1.11 (1.00-1.20)  yes",
		"default  defrag-leader  3             0.60 (0.00-0.70)  0.60 (0.00-0.70)    1.00              0.00 (0.00-1.50)   0.00 (0.00-1.50)       1.00   0.00                0.00                    1.00              yes",
		"no (new leader)",
		"slow     kill-leader    2 (0 paired)  3.50 (3.00-4.00)",
		"goal met for 2 of 6 faults and profiles",
		"default  kill-leader    0.10 (0.10-0.20)  0.20 (0.10-0.30)     1.00 (1.00-3.00)  -                 -                   -      -             -                 5.00",
		"default  defrag-leader  -                 -                    -                 0.60 (0.40-0.70)  1.20 (0.80-1.40)    2.00   105           106               0.60 (0.40-0.70)    5.00",
		"slow kill-leader round 1: etcdbench: unknown command",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the table lacks %q:\n%s", want, out)
		}
	}
	f := figures(rows)
	if f["default_kill_leader_within_goal"] != 1 || f["default_stop_leader_within_goal"] != 0 || f["goals_met"] != 2 || f["slow_kill_leader_truth_outage_s"] != 3.5 ||
		f["default_defrag_leader_truth_defrag_s"] != 0.6 || f["default_defrag_leader_defrag_ratio"] != 2 || f["default_defrag_leader_etcdbench_after_end_outage_s_max"] != 1.5 {
		t.Errorf("figures %v", f)
	}
	if _, ok := f["slow_stop_leader_truth_outage_s"]; ok {
		t.Error("a figure without a value was kept")
	}
}

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
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
	if o.step != 10*time.Second || o.Clients != 50 || o.KeySize != 256 || o.ValSize != 1024 || o.Rounds != 1 || o.Storages != "all" {
		t.Errorf("defaults %+v", o)
	}
	for _, args := range [][]string{{"--storages", "floppy"}, {"--etcds", "etcd-2"}, {"--step", "soon"}, {"--step", "10ms"},
		{"--rounds", "0"}, {"--start", "1"}, {"--ramdisk", "-1"}, {"--ramdisk", "1000000", "--dir", "/tmp"}, {"--clients", "10", "--conns", "20"}, {"--shape", "bursty"}, {"extra"}} {
		if _, err := parseFlags(args, io.Discard); !errors.As(err, new(cmp.UsageError)) {
			t.Errorf("%v: %v, want a usage error", args, err)
		}
	}
}

// The truth's shape: --clients on --conns at every rate, or check perf's
// at each rate.
func TestShapeAt(t *testing.T) {
	o, err := parseFlags([]string{"--shape", "check-perf"}, io.Discard)
	if err != nil || o.Shape != shapeCheckPerf {
		t.Fatalf("--shape check-perf: %+v, %v", o.params, err)
	}
	fixed, perf := stepper{conns: 50, clients: 50}, stepper{conns: 50, clients: 50, checkPerf: true}
	for rate, want := range map[float64]int{100: 50, 476: 200, 3200: 500, 12800: 1000} {
		if c, n := fixed.shapeAt(rate); c != 50 || n != 50 {
			t.Errorf("fixed at %g/s: %d conns, %d clients, want 50 and 50", rate, c, n)
		}
		if c, n := perf.shapeAt(rate); c != want || n != want {
			t.Errorf("check perf's at %g/s: %d conns, %d clients, want %d", rate, c, n, want)
		}
	}
}

func TestJudge(t *testing.T) {
	ok := step{Offered: 1000, Achieved: 995, WALP99: 3 * time.Millisecond, CommitP99: 12 * time.Millisecond}
	for _, tc := range []struct {
		name string
		mod  func(*step)
		pass bool
		why  string
	}{
		{"within every limit", func(*step) {}, true, "WAL p99 3.0ms"},
		{"slow WAL", func(s *step) { s.WALP99 = 10 * time.Millisecond }, false, "WAL fsync p99 10.0ms >= 10ms"},
		{"slow commit", func(s *step) { s.CommitP99 = 30 * time.Millisecond }, false, "backend commit p99 30.0ms >= 25ms"},
		{"rate not reached", func(s *step) { s.Achieved = 850 }, false, "achieved 850/s < 90% of 1000/s"},
		{"errors", func(s *step) { s.Errors = 2 }, false, "2 errors"},
		{"timed out", func(s *step) { s.TimedOut, s.Broken, s.Achieved = true, "benchmark did not finish in time", 0 }, false, "did not finish in time"},
		{"no summary", func(s *step) { s.Broken = "benchmark's summary: no 99% line" }, false, "no 99% line"},
		{"no fsync observed", func(s *step) { s.WALP99 = search.NoneObserved }, false, "none observed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := ok
			tc.mod(&s)
			s.judge(search.DefaultLimits)
			if s.Pass != tc.pass || !strings.Contains(s.Why, tc.why) {
				t.Errorf("pass %v (%s), want %v with %q", s.Pass, s.Why, tc.pass, tc.why)
			}
		})
	}
}

func TestEvidence(t *testing.T) {
	parse := func(s string) metrics.Families { return cmptest.Metrics(t, s) }
	cpu := func(sec float64) string {
		return fmt.Sprintf("# TYPE %s counter\n%s %g\n", processCPU, processCPU, sec)
	}
	before := parse(cmptest.PromHist(search.WALFsync, 0, 0, 0, 0, 0, 0, 0) + cmptest.PromHist(search.BackendCommit, 0, 0, 0, 0, 0, 0, 0) + cpu(12.5))
	// 100 fsyncs, all under 2 ms; 10 commits, one over 16 ms; 8.5 s of CPU.
	after := parse(cmptest.PromHist(search.WALFsync, 50, 100, 100, 100, 100, 100, 100) + cmptest.PromHist(search.BackendCommit, 0, 0, 5, 9, 9, 10, 10) + cpu(21))
	var s step
	s.evidence(before, after)
	if s.WALFsyncs != 100 || s.Commits != 10 || s.EtcdCPU != 8.5 {
		t.Errorf("counts %g %g, CPU %g s: want 100, 10 and 8.5 s", s.WALFsyncs, s.Commits, s.EtcdCPU)
	}
	// An etcd without the process collector: no CPU, not a negative one.
	var none step
	none.evidence(before, parse(cmptest.PromHist(search.WALFsync, 50, 100, 100, 100, 100, 100, 100)))
	if none.EtcdCPU != 0 {
		t.Errorf("no process_cpu_seconds_total after the step: CPU %g, want 0 (not measured)", none.EtcdCPU)
	}
	if s.WALP99 > 2*time.Millisecond || s.CommitP99 < 16*time.Millisecond || s.CommitP99 > 32*time.Millisecond {
		t.Errorf("p99s %v and %v, want under 2ms and in 16-32ms", s.WALP99, s.CommitP99)
	}
}

func TestParseDiskstats(t *testing.T) {
	in := []byte(" 253       0 zram0 1 0 8 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n" +
		" 254       0 vda 9019 3184 712026 3215 61841 51021 4207162 57313 0 48456 65780 0 0 0 0 5733 5250\n")
	d, err := parseDiskstats(in, "254:0")
	if err != nil || d != (diskCounters{Writes: 61841, SectorsWrite: 4207162, Flushes: 5733}) {
		t.Errorf("got %+v, %v", d, err)
	}
	if _, err := parseDiskstats(in, "8:0"); err == nil {
		t.Error("a missing device: no error")
	}
}

func TestCostAt(t *testing.T) {
	tr := truth{HighestPass: 500, Steps: []step{
		{Offered: 500, Pass: true, Puts: 5000, Seconds: 10, WALFsyncs: 2500, Commits: 100, Device: diskCounters{Writes: 15000, SectorsWrite: 40000, Flushes: 5000}},
		{Offered: 1000, Pass: false, Puts: 10000},
	}}
	c, ok := costAt(tr)
	if !ok || c.DeviceWrites != 3 || c.DeviceBytes != 4096 || c.DeviceFlushes != 1 || c.WALFsyncsPerPut != 0.5 || c.CommitsPerSec != 10 ||
		!math.IsNaN(c.EtcdCPU) || !math.IsNaN(c.BenchmarkCPU) {
		t.Errorf("got %+v %v", c, ok)
	}
	tr.Steps[0].EtcdCPU, tr.Steps[0].BenchmarkCPU = 1.5, 1
	if c, _ := costAt(tr); c.EtcdCPU != 300e-6 || c.BenchmarkCPU != 200e-6 || micros(c.EtcdCPU) != "300" || micros(c.BenchmarkCPU) != "200" {
		t.Errorf("CPU per put: etcd %g, benchmark %g; want 300 and 200 µs", c.EtcdCPU, c.BenchmarkCPU)
	}
	if _, ok := costAt(truth{}); ok {
		t.Error("no passing step: a cost")
	}
}

func TestSpread(t *testing.T) {
	if s := spread([]float64{3, 1, 2}, "%.0f"); s != "2 (1-3)" {
		t.Errorf("spread = %q", s)
	}
	if s := spread([]float64{1.5}, "%.2f"); s != "1.50" {
		t.Errorf("spread of one = %q", s)
	}
	if r := ratio(300, 0); !math.IsInf(r, 1) {
		t.Errorf("ratio against zero = %v", r)
	}
	if r := ratio(0, 0); r != 1 {
		t.Errorf("ratio of no rate to no rate = %v, want 1 (they agree)", r)
	}
	if m := median([]float64{0.6, 1, math.Inf(1), 2}); m != 1.5 {
		t.Errorf("median of four = %v, want the mean of the middle two", m)
	}
}

// --from merges earlier runs' rounds by storage and saves the figures the
// READMEs quote: the estimate and its ratio to each real etcd.
func TestMergedResults(t *testing.T) {
	dir := t.TempDir()
	write := func(file string, n int, est, pass float64) string {
		rf := resultsFile{Started: time.Date(2026, 11, 26, 15, 0, 0, 0, time.UTC), Rows: []row{{Storage: "iops-1000", Rounds: []round{{N: n,
			Capacity: &measured{Rate: est},
			Truths:   []truth{{Etcd: "etcd-3.4", HighestPass: pass, LowestFail: pass * 1.1}}}}}}}
		path := filepath.Join(dir, file)
		if err := cmp.WriteJSON(path, rf); err != nil {
			t.Fatal(err)
		}
		return path
	}
	a, b := write("a.json", 1, 480, 476), write("b.json", 2, 600, 400)
	o, err := parseFlags([]string{"--from", a + "," + b, "--results", filepath.Join(dir, "results")}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := run(context.Background(), o, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "iops-1000  2 ") {
		t.Errorf("want one row of two rounds:\n%s", out.String())
	}
	r, err := cmp.ReadResult(filepath.Join(dir, "results", "2026-11-26.json"))
	if err != nil {
		t.Fatal(err)
	}
	f := r.Figures
	if r.Rounds != 2 || f["iops_1000_etcd_3_4_ratio_min"] != 480.0/476 || f["iops_1000_etcd_3_4_ratio_max"] != 1.5 || f["ratios"] != 1 || f["ratios_within_goal"] != 0 ||
		f["estimates_in_truth_range"] != 1 {
		t.Errorf("rounds %d, figures %v", r.Rounds, f)
	}
}

// An estimate agrees with a truth that moves from run to run when it lands
// within the goal of the truth's range: latency-tail's rounds 8-10 (etcd
// 3.4 passed 35, 27 and 0; the estimate was 0 each time).
// estimated is round n with the estimate est and each real etcd's
// highest passing rate, in kindNames' order.
func estimated(n int, est float64, passes ...float64) round {
	r := round{N: n, Capacity: &measured{Rate: est}}
	for i, p := range passes {
		r.Truths = append(r.Truths, truth{Etcd: kindNames[i], HighestPass: p})
	}
	return r
}

func TestInRange(t *testing.T) {
	rd := estimated
	s := summarize(row{Storage: "latency-tail", Rounds: []round{rd(8, 0, 35, 0), rd(9, 0, 27, 0), rd(10, 0, 0, 13)}})
	if in, ok := s.inRange("etcd-3.4"); !in || !ok {
		t.Errorf("estimate 0 against 0-35: in %v (ok %v), want in", in, ok)
	}
	if in, _ := s.inRange("embedded"); !in {
		t.Error("estimate 0 against 0-13: want in range")
	}
	s = summarize(row{Storage: "plain", Rounds: []round{rd(1, 2400, 4149, 3200), rd(2, 2400, 4525, 3489)}})
	if in, _ := s.inRange("etcd-3.4"); in {
		t.Error("estimate 2400 against 4149-4525: want out of range (under 4149/1.25)")
	}
	if in, _ := s.inRange("embedded"); in {
		t.Error("estimate 2400 against 3200-3489: want out of range (under 3200/1.25 = 2560)")
	}
	s = summarize(row{Storage: "plain", Rounds: []round{rd(1, 2700, 3200), rd(2, 2700, 3489)}})
	if in, _ := s.inRange("etcd-3.4"); !in {
		t.Error("estimate 2700 against 3200-3489: want in range (over 2560)")
	}
	if _, ok := s.inRange("embedded"); ok {
		t.Error("no embedded truth: want no answer")
	}
}

func TestMeets(t *testing.T) {
	rd := estimated
	// A truth that agrees with itself within the goal is one number: the
	// median ratio judges, whatever the range would say.
	s := summarize(row{Storage: "iops-5000", Rounds: []round{rd(1, 2600, 3200, 2691), rd(2, 2600, 3900, 2691), rd(3, 2600, 3900, 2900)}})
	if met, byRange, ok := s.meets("etcd-3.4"); met || byRange || !ok {
		t.Errorf("estimate 2600 against 3200, 3900, 3900 (median ratio 0.67): met %v by range %v ok %v, want a miss by ratio", met, byRange, ok)
	}
	if in, _ := s.inRange("etcd-3.4"); !in {
		t.Error("estimate 2600 is in 3200-3900's range widened by 1.25x (from 2560): the ratio, not the range, must judge it")
	}
	if w := s.goalWord("embedded"); w != "yes" {
		t.Errorf("estimate 2600 against 2691-2900 (median ratio 0.97): %q, want yes", w)
	}
	// A truth that spreads wider than the goal is judged by its range.
	s = summarize(row{Storage: "network-block", Rounds: []round{rd(11, 475, 168, 130), rd(12, 183, 476, 519), rd(13, 400, 336, 92)}})
	if met, byRange, ok := s.meets("etcd-3.4"); !met || !byRange || !ok {
		t.Errorf("estimate median 400 against 168-476: met %v by range %v ok %v, want met by range", met, byRange, ok)
	}
	if w := s.goalWord("embedded"); w != "yes (range)" {
		t.Errorf("estimate median 400 against 92-519: %q, want yes (range)", w)
	}
	s = summarize(row{Storage: "latency-tail", Rounds: []round{rd(1, 200, 50, 0), rd(2, 200, 0, 0)}})
	if w := s.goalWord("etcd-3.4"); w != "no (range)" {
		t.Errorf("estimate 200 against 0-50: %q, want no (range)", w)
	}
	if w := s.goalWord("embedded"); w != "no" {
		t.Errorf("estimate 200 against 0, 0: %q, want no (a truth of 0 agrees with itself)", w)
	}
	s = summarize(row{Storage: "fuse-slow-sync", Rounds: []round{rd(1, 0, 0, 0), rd(2, 0, 0, 0)}})
	if w := s.goalWord("etcd-3.4"); w != "yes" {
		t.Errorf("estimate 0 against 0, 0: %q, want yes", w)
	}
	if _, _, ok := summarize(row{Rounds: []round{rd(1, 100)}}).meets("etcd-3.4"); ok {
		t.Error("no truth: want no answer")
	}
	noEstimate := rd(2, 0, 200)
	noEstimate.Capacity = nil
	if _, _, ok := summarize(row{Rounds: []round{rd(1, 100), noEstimate}}).meets("etcd-3.4"); ok {
		t.Error("an estimate and a truth from different rounds: want no answer")
	}
}

func TestTruthsRatios(t *testing.T) {
	rounds := []round{
		{N: 1, Truths: []truth{{Etcd: "etcd-3.4", HighestPass: 168}, {Etcd: "embedded", HighestPass: 130}}},
		{N: 2, Truths: []truth{{Etcd: "etcd-3.4", HighestPass: 0}, {Etcd: "embedded", HighestPass: 0}}},
		{N: 3, Truths: []truth{{Etcd: "etcd-3.4", HighestPass: 500}}},
	}
	rounds = append(rounds, round{N: 4, Truths: []truth{{Etcd: "etcd-3.4", HighestPass: 200}, {Etcd: "embedded", HighestPass: 436}}},
		round{N: 5, Truths: []truth{{Etcd: "etcd-3.4", HighestPass: 0}, {Etcd: "embedded", HighestPass: 27}}})
	v := truthsRatios(row{Rounds: rounds})
	if len(v) != 4 || math.Abs(v[0]-168.0/130) > 1e-9 || v[1] != 1 || math.Abs(v[2]-436.0/200) > 1e-9 || !math.IsInf(v[3], 1) {
		t.Errorf("truthsRatios = %v, want [1.29 1 2.18 +Inf]: the larger over the smaller, either way round, +Inf where one carried nothing, none without both", v)
	}
}

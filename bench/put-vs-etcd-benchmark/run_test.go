package main

import (
	"strings"
	"testing"
	"time"

	"etcdbench/bench/internal/cmp"
	"etcdbench/internal/etcdload"
)

// TestPlanAndRender checks the runs of a round, their pairs, and that the
// tables name benchmark where the fio comparisons name fio.
func TestPlanAndRender(t *testing.T) {
	p := params{Configs: []config{{1, 1, 2000}, {100, 1000, 20000}}, Ops: []string{"put", "range"}, KeySize: 8, ValSize: 256}
	steps, pairs := plan(runner{p: p})
	var names []string
	for _, s := range steps {
		names = append(names, s.Run)
	}
	want := "benchmark put 1/1,etcdbench put 1/1,benchmark put 100/1000,etcdbench put 100/1000," +
		"benchmark range 1/1,etcdbench range 1/1,benchmark range 100/1000,etcdbench range 100/1000"
	if got := strings.Join(names, ","); got != want {
		t.Errorf("steps %s", got)
	}
	if len(pairs) != 4 || pairs[3].Etcd != "etcdbench range 100/1000" || pairs[3].Fio != "benchmark range 100/1000" || pairs[3].Name != "range 100/1000, 20000 requests" {
		t.Errorf("pairs %+v", pairs)
	}
	m := func(tool string, rate float64, p99 time.Duration) cmp.Measurement {
		return measurement(tool, report{Requests: 2000, Total: time.Second, OpsPerSec: rate,
			Percentiles: map[float64]time.Duration{50: time.Millisecond, 99: p99}}, cmp.Child{CPU: 200 * time.Millisecond})
	}
	var rounds []cmp.Round
	for n := 1; n <= 3; n++ {
		rd := cmp.Round{N: n, Runs: map[string]cmp.Measurement{}}
		for _, pr := range pairs {
			rd.Runs[pr.Fio] = m(toolBenchmark, 1000, 2*time.Millisecond)
			rd.Runs[pr.Etcd] = m(cmp.ToolEtcdbench, 1100, 2*time.Millisecond)
			rd.Order = append(rd.Order, pr.Fio, pr.Etcd)
		}
		rounds = append(rounds, rd)
	}
	var b strings.Builder
	if err := renderRound(&b, rounds[0], 3, pairs, metrics()); err != nil {
		t.Fatal(err)
	}
	rows := cmp.SummarizePairs(rounds, pairs, metrics())
	if err := renderSummary(&b, 3, rows); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"etcdbench/benchmark, put 1/1, 2000 requests: throughput 1.10, p99 1.00", "range 100/1000, 20000 requests  throughput", "yes", "100µs"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "fio") {
		t.Errorf("output names fio:\n%s", out)
	}
}

// TestKeyBytes checks that benchmark's keys are as long as etcdbench's
// when asked, and that the range key has the length it is given.
func TestKeyBytes(t *testing.T) {
	r := runner{p: params{KeySize: 8, MatchKeyBytes: true}}
	l := etcdload.DefaultLoad(etcdload.OpPut)
	l.RunID = etcdload.NewRunID()
	if got, want := r.benchKeySize(), len(l.Prefix())+8; got != want {
		t.Errorf("benchmark key size %d, want %d (etcdbench's prefix and key)", got, want)
	}
	r.p.MatchKeyBytes = false
	if got := r.benchKeySize(); got != 8 {
		t.Errorf("benchmark key size %d without matching, want 8", got)
	}
	for _, n := range []int{5, 45} {
		if k := rangeKey(n); len(k) != n {
			t.Errorf("rangeKey(%d) = %q", n, k)
		}
	}
}

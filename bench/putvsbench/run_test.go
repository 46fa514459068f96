package main

import (
	"strings"
	"testing"
	"time"

	"etcdbench/bench/internal/cmp"
)

// TestPlanAndRender checks the runs of a round, their pairs, and that the
// tables name benchmark where the fio comparisons name fio.
func TestPlanAndRender(t *testing.T) {
	p := params{Configs: []config{{1, 1, 2000}, {100, 1000, 20000}}, KeySize: 8, ValSize: 256}
	steps, pairs := plan(runner{p: p})
	var names []string
	for _, s := range steps {
		names = append(names, s.Run)
	}
	if got := strings.Join(names, ","); got != "benchmark 1/1,etcdbench 1/1,benchmark 100/1000,etcdbench 100/1000" {
		t.Errorf("steps %s", got)
	}
	if len(pairs) != 2 || pairs[1].Etcd != "etcdbench 100/1000" || pairs[1].Fio != "benchmark 100/1000" || pairs[1].Name != "100/1000, 20000 puts" {
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
	for _, want := range []string{"etcdbench/benchmark, 1/1, 2000 puts: throughput 1.10, p99 1.00", "100/1000, 20000 puts  throughput", "yes", "100µs"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "fio") {
		t.Errorf("output names fio:\n%s", out)
	}
}

package main

import (
	"context"
	"errors"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"etcdbench/bench/internal/cmp"
)

func TestParseFlagsPaired(t *testing.T) {
	o, err := parseFlags(nil, io.Discard)
	if err != nil || o.Paired || o.PairedStep != "" || o.Sweeps != "capacity,etcd-capacity" {
		t.Errorf("unpaired defaults: paired %v, paired step %q (want none saved), sweeps %q; %v", o.Paired, o.PairedStep, o.Sweeps, err)
	}
	for _, tc := range []struct {
		name       string
		args       []string
		sweeps     string
		pairedStep string
	}{
		{"defaults: capacity beside the pairs", []string{"--paired"}, "capacity", "3s"},
		{"no sweeps", []string{"--paired", "--sweeps", ""}, "", "3s"},
		{"capacity named", []string{"--paired", "--sweeps", "capacity"}, "capacity", "3s"},
		{"a step of its own", []string{"--paired", "--paired-step", "5s", "--etcds", "embedded"}, "capacity", "5s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, err := parseFlags(tc.args, io.Discard)
			if err != nil || !o.Paired || o.Sweeps != tc.sweeps || o.PairedStep != tc.pairedStep {
				t.Errorf("paired %v, sweeps %q, paired step %q, %v; want true, %q, %q", o.Paired, o.Sweeps, o.PairedStep, err, tc.sweeps, tc.pairedStep)
			}
		})
	}
	for _, args := range [][]string{
		{"--paired", "--etcds", ""},
		{"--paired", "--sweeps", "capacity,etcd-capacity"},
		{"--paired", "--sweeps", "etcd-capacity"},
		{"--paired", "--paired-step", "10ms"},
		{"--paired", "--paired-step", "soon"},
	} {
		if _, err := parseFlags(args, io.Discard); !errors.As(err, new(cmp.UsageError)) {
			t.Errorf("%v: %v, want a usage error", args, err)
		}
	}
	// The etcd side's command: etcd capacity on the member, its steps
	// --paired-step long, its report as JSON.
	got := strings.Join(sideArgs("http://127.0.0.1:2379", "3s"), " ")
	if want := "etcd capacity --endpoints http://127.0.0.1:2379 --yes --step 3s --no-trace --no-progress -o json"; got != want {
		t.Errorf("sideArgs = %q, want %q", got, want)
	}
}

// pairedRound is round n with a paired run per real etcd, each
// {side, truth}, in kindNames' order, and capacity's estimate est (< 0:
// capacity did not run).
func pairedRound(n int, est float64, pairs ...[2]float64) round {
	rd := round{N: n}
	if est >= 0 {
		rd.Capacity = &measured{Rate: est}
	}
	for i, p := range pairs {
		rd.Paired = append(rd.Paired, pairedRun{Etcd: kindNames[i], Side: &measured{Rate: p[0]},
			Truth: truth{Etcd: kindNames[i], HighestPass: p[1], LowestFail: p[1] * 1.1}, Load: []string{"1.0", "2.0"}})
	}
	return rd
}

func approx(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestSummarizePaired(t *testing.T) {
	unfinished := pairedRound(4, 500, [2]float64{900, 1000})
	unfinished.Paired[0].Side = nil
	rows := []row{
		{Storage: "busy", Rounds: []round{
			pairedRound(1, 600, [2]float64{800, 1000}, [2]float64{0, 0}),
			pairedRound(2, 700, [2]float64{1100, 1000}, [2]float64{0, 0}),
			pairedRound(3, 650, [2]float64{2000, 1000}, [2]float64{100, 0}),
			unfinished,
		}},
		{Storage: "latency-tail", Skipped: "no FUSE"},
		{Storage: "plain", Rounds: []round{{N: 1, Truths: []truth{{Etcd: "etcd-3.4", HighestPass: 3000}}}}},
	}
	ps := summarizePaired(rows)
	if len(ps) != 2 || ps[0].Etcd != "etcd-3.4" || ps[1].Etcd != "embedded" || ps[0].Storage != "busy" {
		t.Fatalf("summaries %+v, want busy's etcd-3.4 and embedded alone", ps)
	}
	e := ps[0]
	// Ratios 0.8, 1.1, 2.0: median 1.1, within 1.25x; the round whose
	// etcd side did not finish counts for nothing.
	if !slices.Equal(e.Rounds, []int{1, 2, 3}) || !approx(float64(e.Ratio), 1.1) || !approx(float64(e.Min), 0.8) || float64(e.Max) != 2 || !e.Within {
		t.Errorf("etcd-3.4: rounds %v, ratio %v (%v..%v), within %v; want 1-3, 1.1 (0.8..2), yes", e.Rounds, e.Ratio, e.Min, e.Max, e.Within)
	}
	if !slices.Equal(e.Sides, []float64{800, 1100, 2000}) || !slices.Equal(e.Truths, []float64{1000, 1000, 1000}) || e.Fails[0] != 1100 {
		t.Errorf("etcd-3.4's answers: sides %v, truths %v, fails %v", e.Sides, e.Truths, e.Fails)
	}
	if r := floats(e.EstimateRatios); !slices.Equal(e.Estimates, []float64{600, 700, 650}) || !approx(r[0], 0.6) || !approx(r[1], 0.7) {
		t.Errorf("estimates %v over the paired truth %v, want 600, 700, 650 and 0.6, 0.7, 0.65", e.Estimates, r)
	}
	// Nothing against nothing agrees (1); a side that carried 100 where
	// the truth carried none is +Inf. Median 1: within.
	b := ps[1]
	if r := floats(b.Ratios); r[0] != 1 || r[1] != 1 || !math.IsInf(r[2], 1) || float64(b.Ratio) != 1 || !math.IsInf(float64(b.Max), 1) || !b.Within {
		t.Errorf("embedded: ratios %v, median %v, max %v, within %v; want 1, 1, +Inf: 1, +Inf, yes", r, b.Ratio, b.Max, b.Within)
	}
	// A median past the goal either way misses it.
	for _, tc := range []struct {
		side, truth float64
		within      bool
	}{{1250, 1000, true}, {1260, 1000, false}, {800, 1000, true}, {790, 1000, false}, {100, 0, false}} {
		ps := summarizePaired([]row{{Storage: "s", Rounds: []round{pairedRound(1, -1, [2]float64{tc.side, tc.truth})}}})
		if len(ps) != 1 || ps[0].Within != tc.within || ps[0].Estimates != nil {
			t.Errorf("side %g, truth %g: %+v, want within %v and no estimate", tc.side, tc.truth, ps, tc.within)
		}
	}
}

func TestPairedFigures(t *testing.T) {
	ps := summarizePaired([]row{
		{Storage: "busy-go-alloc", Rounds: []round{pairedRound(1, -1, [2]float64{800, 1000}, [2]float64{100, 0}), pairedRound(2, -1, [2]float64{1200, 1000}, [2]float64{120, 0})}},
	})
	f := pairedFigures(ps)
	want := map[string]float64{
		"busy_go_alloc_etcd_3_4_paired_ratio": 1, "busy_go_alloc_etcd_3_4_paired_ratio_min": 0.8, "busy_go_alloc_etcd_3_4_paired_ratio_max": 1.2,
		"busy_go_alloc_etcd_3_4_paired_side": 1000, "busy_go_alloc_etcd_3_4_paired_truth": 1000, "busy_go_alloc_etcd_3_4_paired_within_goal": 1,
		"busy_go_alloc_embedded_paired_side": 110, "busy_go_alloc_embedded_paired_truth": 0, "busy_go_alloc_embedded_paired_within_goal": 0,
		"paired_ratios": 2, "paired_ratios_within_goal": 1,
	}
	for k, v := range want {
		if got, ok := f[k]; !ok || !approx(got, v) {
			t.Errorf("%s = %v (present %v), want %v", k, got, ok, v)
		}
	}
	// Infinite ratios have no figure.
	for _, k := range []string{"busy_go_alloc_embedded_paired_ratio", "busy_go_alloc_embedded_paired_ratio_min", "busy_go_alloc_embedded_paired_ratio_max"} {
		if v, ok := f[k]; ok {
			t.Errorf("%s = %v, want no figure for +Inf", k, v)
		}
	}
	if len(pairedFigures(nil)) != 0 {
		t.Error("no paired rounds: want no paired figures")
	}
}

// A paired run's table leads with the paired answer; the storages' table
// of unpaired rounds is left out when there are none.
func TestPrintPaired(t *testing.T) {
	rows := []row{{Storage: "busy", Rounds: []round{pairedRound(1, 600, [2]float64{800, 1000}), pairedRound(2, 900, [2]float64{1000, 900})}}}
	var b strings.Builder
	if err := printTable(&b, rows); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"PAIRED: 1 of 1 medians", "busy     etcd-3.4  2       800,1000", "1000,900 / 1100,990", "0.96          0.80..1.11  yes",
		"1.0,2.0 | 1.0,2.0", "A real etcd's cost per put"} {
		if !strings.Contains(out, want) {
			t.Errorf("want %q in:\n%s", want, out)
		}
	}
	if strings.Contains(out, "disk / CPU side") {
		t.Errorf("the storages' table printed without an unpaired round:\n%s", out)
	}
	// Merged with an unpaired run, its rounds keep their table; and an
	// unpaired run alone prints no paired table.
	rows[0].Rounds = append(rows[0].Rounds, estimated(3, 700, 1100, 1000))
	b.Reset()
	if err := printTable(&b, rows); err != nil {
		t.Fatal(err)
	}
	if out := b.String(); !strings.Contains(out, "PAIRED: 1 of 1") || !strings.Contains(out, "disk / CPU side") || !strings.Contains(out, "busy     1   ") {
		t.Errorf("want the paired table and the unpaired round's:\n%s", out)
	}
	b.Reset()
	if err := printTable(&b, unpairedRows(rows)); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "PAIRED") {
		t.Errorf("an unpaired run printed a paired table:\n%s", b.String())
	}
}

// --from reads paired runs and saves their figures beside the storages'
// (capacity's estimate over the paired truth is <storage>_<etcd>_ratio).
func TestMergedPairedResults(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "paired.json")
	rf := resultsFile{Started: time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC), Params: params{Paired: true, PairedStep: "3s"},
		Rows: []row{{Storage: "busy", Rounds: []round{pairedRound(1, 600, [2]float64{800, 1000})}}}}
	rf.Paired = summarizePaired(rf.Rows)
	if err := cmp.WriteJSON(path, rf); err != nil {
		t.Fatal(err)
	}
	o, err := parseFlags([]string{"--from", path, "--results", filepath.Join(dir, "results")}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := run(context.Background(), o, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	r, err := cmp.ReadResult(filepath.Join(dir, "results", "2026-11-29.json"))
	if err != nil {
		t.Fatal(err)
	}
	f := r.Figures
	if !approx(f["busy_etcd_3_4_paired_ratio"], 0.8) || f["paired_ratios"] != 1 || f["paired_ratios_within_goal"] != 1 || !approx(f["busy_etcd_3_4_ratio"], 0.6) {
		t.Errorf("figures %v", f)
	}
	if !strings.Contains(r.Table, "PAIRED: 1 of 1") {
		t.Errorf("saved table:\n%s", r.Table)
	}
}

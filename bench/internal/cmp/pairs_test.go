package cmp

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestAlternate(t *testing.T) {
	in := []string{"a", "b", "c"}
	if got := Alternate(1, in); !slices.Equal(got, in) {
		t.Errorf("odd round: %v", got)
	}
	if got := Alternate(2, in); !slices.Equal(got, []string{"c", "b", "a"}) {
		t.Errorf("even round: %v", got)
	}
	if in[0] != "a" {
		t.Error("Alternate changed its input")
	}
}

func TestNetCPU(t *testing.T) {
	m := Measurement{Ops: 1010, CPU: 300 * time.Millisecond, Base: &Baseline{Ops: 10, CPU: 200 * time.Millisecond}}
	if m.NetCPU() != 100*time.Millisecond || m.NetOps() != 1000 || m.CPUPerOp() != 100*time.Microsecond {
		t.Errorf("net CPU %v, ops %d, per op %v; want 100ms, 1000, 100µs", m.NetCPU(), m.NetOps(), m.CPUPerOp())
	}
	if c := (Measurement{Ops: 5, CPU: time.Second, Base: &Baseline{CPU: 2 * time.Second}}).CPUPerOp(); c != 0 {
		t.Errorf("baseline above the run: CPUPerOp = %v, want 0 (no figure)", c)
	}
	if c := (Measurement{Ops: 2, CPU: time.Second}).CPUPerOp(); c != 500*time.Millisecond {
		t.Errorf("no baseline: CPUPerOp = %v", c)
	}
	self := Measurement{Ops: 1000, Bytes: 4096000, CPU: 2 * time.Second, SelfCPU: 100 * time.Millisecond, Base: &Baseline{Ops: 10, CPU: time.Second}}
	if cpu, ops, bytes := self.IOCPU(); cpu != 100*time.Millisecond || ops != 1000 || bytes != 4096000 || self.CPUPerOp() != 100*time.Microsecond {
		t.Errorf("with SelfCPU: IOCPU = %v, %d, %d; CPUPerOp %v; want etcdbench's own figure over all its I/O", cpu, ops, bytes, self.CPUPerOp())
	}
}

func TestRunRound(t *testing.T) {
	var ran []string
	step := func(name string, fail bool) Step {
		return Step{Run: name, Do: func(context.Context) (Measurement, json.RawMessage, error) {
			ran = append(ran, name)
			if fail {
				return Measurement{}, nil, errors.New("boom")
			}
			return Measurement{Ops: 1}, json.RawMessage(`{}`), nil
		}}
	}
	rd, raws, err := RunRound(context.Background(), 2, 3, []Step{step("x", false), step("y", false)}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ran, []string{"y", "x"}) || !slices.Equal(rd.Order, ran) || len(raws) != 2 {
		t.Fatalf("ran %v, order %v, %d raw runs", ran, rd.Order, len(raws))
	}
	if m := rd.Runs["x"]; m.Run != "x" || m.Round != 2 || m.Position != 2 {
		t.Errorf("x = %+v, want run x, round 2, position 2", m)
	}
	if _, _, err := RunRound(context.Background(), 1, 3, []Step{step("x", false), step("bad", true)}, io.Discard); err == nil || err.Error() != "bad: boom" {
		t.Errorf("err = %v, want the failing run named", err)
	}
}

func TestSummarizePairs(t *testing.T) {
	iops := Metric{Name: "iops", Unit: UnitRate, Value: func(m Measurement) float64 { return m.Figures["iops"] }, Target: &Target{Lo: 0.95}}
	mk := func(n int, e, f1, f2 float64) Round {
		return Round{N: n, Runs: map[string]Measurement{
			"e":  {Figures: map[string]float64{"iops": e}},
			"f1": {Figures: map[string]float64{"iops": f1}},
			"f2": {Figures: map[string]float64{"iops": f2}},
		}}
	}
	rs := []Round{mk(1, 100, 100, 50), mk(2, 90, 100, 100), mk(3, 200, 100, 100)}
	pairs := []Pair{{Name: "e vs f1", Etcd: "e", Fio: "f1"}, {Name: "e vs f2", Etcd: "e", Fio: "f2"}}
	rows := SummarizePairs(rs, pairs, []Metric{iops})
	if len(rows) != 2 {
		t.Fatalf("%d rows, want 2", len(rows))
	}
	// e vs f1: ratios 1, 0.9, 2 -> median 1; e vs f2: 2, 0.9, 2 -> 2.
	if r := rows[0]; r.Pair != "e vs f1" || r.Ratio != 1 || r.RatioMin != 0.9 || r.RatioMax != 2 || !r.Met || r.Etcd != 100 || r.Fio != 100 {
		t.Errorf("row 0 = %+v", r)
	}
	if r := rows[1]; r.Ratio != 2 || r.Fio != 100 {
		t.Errorf("row 1 = %+v", r)
	}
	delete(rs[0].Runs, "e") // a round without the run is left out
	if r := SummarizePairs(rs, pairs[:1], []Metric{iops})[0]; r.Ratio != JSONFloat(Median([]float64{0.9, 2})) {
		t.Errorf("row without round 1 = %+v", r)
	}
	if r := SummarizePairs(nil, pairs[:1], []Metric{iops})[0]; !math.IsNaN(float64(r.Ratio)) || r.Met {
		t.Errorf("no rounds: %+v, want NaN, not met", r)
	}
}

func TestComparisonRun(t *testing.T) {
	fail := false
	step := func(name string, iops float64) Step {
		return Step{Run: name, Do: func(context.Context) (Measurement, json.RawMessage, error) {
			if fail && name == "e" {
				return Measurement{}, nil, errors.New("boom")
			}
			return Measurement{Figures: map[string]float64{"iops": iops}}, nil, nil
		}}
	}
	c := Comparison{
		Steps:        []Step{step("f", 100), step("e", 98)},
		Pairs:        []Pair{{Name: "e vs f", Etcd: "e", Fio: "f"}},
		Metrics:      []Metric{{Name: "iops", Unit: UnitRate, Value: func(m Measurement) float64 { return m.Figures["iops"] }, Target: &Target{Lo: 0.95}}},
		Columns:      []Column{{Head: "IOPS", Value: func(m Measurement) string { return FmtValue(UnitRate, m.Figures["iops"]) }}},
		TargetSource: "goal",
	}
	var runs []RawRun
	var rows []Row
	var out strings.Builder
	if err := c.Run(context.Background(), 3, &out, io.Discard, &runs, &rows); err != nil {
		t.Fatal(err)
	}
	if len(runs) != 6 || len(rows) != 1 || rows[0].Ratio != 0.98 || !rows[0].Met {
		t.Errorf("%d runs, rows %+v; want 6 runs and one met row of ratio 0.98", len(runs), rows)
	}
	for _, want := range []string{"round 1/3 (in this order)", "round 3/3", "  etcdbench/fio, e vs f: iops 0.98\n", "MEDIANS over 3 rounds", "1 of 1 targets met. Targets: goal."} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	fail, runs, rows = true, nil, nil
	if err := c.Run(context.Background(), 3, io.Discard, io.Discard, &runs, &rows); err == nil || err.Error() != "round 1: e: boom" || len(runs) != 1 || rows != nil {
		t.Errorf("failing run: err = %v, %d runs, rows %v; want round 1 named, fio's run kept, no summary", err, len(runs), rows)
	}
}

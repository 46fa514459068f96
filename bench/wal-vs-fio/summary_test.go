package main

import (
	"encoding/json"
	"math"
	"testing"
	"time"
)

func TestRatios(t *testing.T) {
	fio := measurement{Syncs: 1000, P50: 200 * time.Microsecond, P99: 400 * time.Microsecond, CPU: 100 * time.Millisecond}
	etcd := measurement{Syncs: 500, P50: 220 * time.Microsecond, P99: 360 * time.Microsecond, CPU: 40 * time.Millisecond}
	got := roundRatios(round{Fio: fio, Etcd: etcd})
	// CPU per sync: 80µs vs 100µs.
	want := ratios{P50: 1.1, P99: 0.9, CPUPerSync: 0.8}
	for _, c := range []struct {
		name      string
		got, want float64
	}{{"p50", got.P50, want.P50}, {"p99", got.P99, want.P99}, {"cpu per sync", got.CPUPerSync, want.CPUPerSync}} {
		if math.Abs(c.got-c.want) > 1e-9 {
			t.Errorf("%s ratio = %v, want %v", c.name, c.got, c.want)
		}
	}
	if c := (measurement{CPU: time.Second}).CPUPerSync(); c != 0 {
		t.Errorf("CPUPerSync with no syncs = %v, want 0", c)
	}
}

// TestSummarize checks that the summary takes the median of per-round
// ratios, which differs from the ratio of the medians here.
func TestSummarize(t *testing.T) {
	mk := func(fioP50, etcdP50 time.Duration) round {
		return round{
			Fio:  measurement{Syncs: 100, P50: fioP50, P99: 2 * fioP50, CPU: 100 * time.Millisecond, Wall: time.Second},
			Etcd: measurement{Syncs: 100, P50: etcdP50, P99: 2 * etcdP50, CPU: 50 * time.Millisecond, Wall: 2 * time.Second},
		}
	}
	rs := []round{mk(100, 100), mk(200, 300), mk(400, 300)} // ratios 1, 1.5, 0.75
	rs[1].Adaptive = &measurement{Syncs: 3000, Runtime: 10 * time.Second, Wall: 11 * time.Second, Stop: "verdict decided: at most 0.06 %"}
	rs[2].Adaptive = &measurement{Syncs: 5000, Runtime: 12 * time.Second, Wall: 13 * time.Second, Stop: "verdict decided: at most 0.04 %"}
	s := summarize(rs)
	if len(s.Rows) != 3 {
		t.Fatalf("%d rows, want 3", len(s.Rows))
	}
	p50 := s.Rows[0]
	if p50.Metric != metricP50 || p50.Fio != 200 || p50.Etcd != 300 {
		t.Errorf("p50 row medians = %+v, want fio 200ns etcdbench 300ns", p50)
	}
	if p50.Ratio != 1 || p50.RatioMin != 0.75 || p50.RatioMax != 1.5 || !p50.Met {
		t.Errorf("p50 ratio = %v (%v..%v) met=%v, want 1 (0.75..1.5) met", p50.Ratio, p50.RatioMin, p50.RatioMax, p50.Met)
	}
	cpu := s.Rows[2]
	if cpu.Metric != metricCPU || cpu.Ratio != 0.5 || !cpu.Met {
		t.Errorf("CPU row = %+v, want ratio 0.5 and met", cpu)
	}
	if s.Syncs != [2]int64{100, 100} || s.Wall != [2]time.Duration{time.Second, 2 * time.Second} {
		t.Errorf("syncs %v wall %v", s.Syncs, s.Wall)
	}
	a := s.Adaptive
	if a == nil || a.Syncs != 4000 || a.Runtime != 11*time.Second || a.FioSyncs != 100 ||
		len(a.Stops) != 1 || a.Stops[0] != "verdict decided (2 of 2 rounds)" {
		t.Errorf("adaptive = %+v, want medians of the two adaptive runs (4000 syncs, 11s) and one stop reason", a)
	}
	if _, err := json.Marshal(s); err != nil {
		t.Errorf("summary does not encode: %v", err)
	}
}

func TestSummarizeNoRatio(t *testing.T) {
	// fio reported zero latencies: ratios are NaN, targets unmet, JSON null.
	rs := []round{{Fio: measurement{Syncs: 1}, Etcd: measurement{Syncs: 1, P50: 5}}}
	s := summarize(rs)
	if s.Rows[0].Met || !math.IsNaN(float64(s.Rows[0].Ratio)) {
		t.Errorf("row = %+v, want NaN ratio, not met", s.Rows[0])
	}
	b, err := json.Marshal(s.Rows[0])
	if err != nil {
		t.Fatal(err)
	}
	var back map[string]any
	if err := json.Unmarshal(b, &back); err != nil || back["ratio_median"] != nil {
		t.Errorf("ratio_median encoded as %v (err %v), want null", back["ratio_median"], err)
	}
}

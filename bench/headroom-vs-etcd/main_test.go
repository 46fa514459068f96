package main

import (
	"errors"
	"io"
	"os"
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
	if len(o.Shares) != 3 || o.Shares[2] != 0.9 || o.ReadAfter <= time.Minute || o.ReadAfter >= o.Level {
		t.Errorf("defaults %+v", o)
	}
	for _, args := range [][]string{{"--shares", "0.5,0.25"}, {"--shares", "x"}, {"--read-after", "30s"}, {"--read-after", "200s"}, {"--rounds", "1"}} {
		if _, err := parseFlags(args, io.Discard); !errors.As(err, new(cmp.UsageError)) {
			t.Errorf("%v: %v, want a usage error", args, err)
		}
	}
}

// TestAlertRules: the bench's copy of the near-capacity alert is the
// deployed one with only its `for` changed.
func TestAlertRules(t *testing.T) {
	got, err := alertRules("../../deploy/prometheus/etcdbench-rules.yaml", 15*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	deployed, err := os.ReadFile("../../deploy/prometheus/etcdbench-rules.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, "alert: EtcdbenchNearCapacity") || !strings.Contains(got, "for: 15s") || strings.Count(got, "alert:") != 1 {
		t.Errorf("rules:\n%s", got)
	}
	if back := strings.Replace(got[strings.Index(got, "  - alert:"):], "for: 15s", "for: 10m", 1); !strings.Contains(string(deployed), back) {
		t.Errorf("the copy differs from the deployed alert beyond its for:\n%s", got)
	}
}

func TestRender(t *testing.T) {
	rounds := []round{{N: 1, Estimate: 1000, Levels: []level{
		{Share: 0.25, Achieved: 250, TrueShare: 0.25, Ratio: 0.27},
		{Share: 0.5, Achieved: 500, TrueShare: 0.5, Ratio: 0.45},
		{Share: 0.9, Achieved: 880, TrueShare: 0.88, Ratio: 0.9, Firing: true},
	}}}
	table, figs := render(rounds)
	if figs["worst_ratio_difference"] < 0.0499 || figs["worst_ratio_difference"] > 0.0501 || figs["alert_fired_high"] != 1 || figs["alert_fired_low"] != 0 || figs["levels_low"] != 2 {
		t.Errorf("figures %v", figs)
	}
	if !strings.Contains(table, "| 1 | 1000 | 0.90 | 880.0 | 0.880 | 0.900 | +0.020 | firing |") {
		t.Errorf("table:\n%s", table)
	}
}

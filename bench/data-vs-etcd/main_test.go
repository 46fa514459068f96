package main

import (
	"strings"
	"testing"

	"etcdbench/internal/result"
)

func TestParseSizes(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []int64
		bad  bool
	}{
		{in: "100MB,400MB,1GB", want: []int64{100 << 20, 400 << 20, 1 << 30}},
		{in: "64MiB", want: []int64{64 << 20}},
		{in: "1GB,100MB", bad: true},
		{in: "100KB", bad: true},
		{in: "lots", bad: true},
	} {
		t.Run(c.in, func(t *testing.T) {
			got, err := parseSizes(c.in)
			if (err != nil) != c.bad {
				t.Fatalf("parseSizes(%q) = %v, %v", c.in, got, err)
			}
			if !c.bad && !equal(got, c.want) {
				t.Errorf("parseSizes(%q) = %v, want %v", c.in, got, c.want)
			}
		})
	}
}

func equal(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestRender(t *testing.T) {
	ob := func(round int, restart, predicted float64) observation {
		return observation{Round: round, Etcd: "etcd 3.4 (Debian)", Target: "100.0 MiB", DBBytes: 100 << 20, InUseBytes: 90 << 20, Revisions: 1000,
			Predicted: &result.DataPredicted{RestartSeconds: predicted, DefragSeconds: 1, SnapshotSendSeconds: 1},
			Restart:   restart, Defrag: 1, Send: 4, Receive: 3.5, SendWall: 5, Snapshot: 1}
	}
	obs := []observation{ob(1, 2, 2), ob(2, 1, 2), ob(3, 2, 3)}
	ans := []analysis{{Round: 1, Etcd: "etcd 3.4 (Debian)", DBBytes: 1 << 30, Wall: 12, MaxRSS: 150e6}, {Round: 2, Etcd: "etcd 3.4 (Debian)", DBBytes: 1 << 30, Wall: 40, MaxRSS: 90e6}}
	table, figs := render(obs, ans)
	for name, want := range map[string]float64{
		"etcd_3_4_debian_100_0_mib_restart_ratio":                 1.5, // ratios 1, 2, 1.5: the median
		"etcd_3_4_debian_100_0_mib_defrag_ratio":                  1.0,
		"etcd_3_4_debian_100_0_mib_snapshot_send_ratio":           0.25,
		"etcd_3_4_debian_100_0_mib_snapshot_save_ratio":           1, // shown, not judged
		"etcd_3_4_debian_100_0_mib_snapshot_send_wall_measured_s": 5,
		"etcd_3_4_debian_100_0_mib_snapshot_receive_measured_s":   3.5,
		"within":                              2, // restart (1.5) and defrag (1.0) are within, the send (0.25) is not; the save (1.0) is not judged
		"compared":                            3,
		"etcd_3_4_debian_analysis_wall_s":     26,
		"etcd_3_4_debian_analysis_max_rss_mb": 120,
	} {
		if got, ok := figs[name]; !ok || got != want {
			t.Errorf("figure %s = %v (%v), want %v; figures %v", name, got, ok, want, figs)
		}
	}
	for _, want := range []string{"| etcd 3.4 (Debian) | 100.0 MiB (90.0 MiB) | 1000 | 0 | restart | 2.00 s | 2.00 s (1.00-2.00) | 1.50 (1.00-2.00) | yes |", "| snapshot send (leader's metric) | 1.00 s | 4.00 s (4.00-4.00) | 0.25 (0.25-0.25) | NO |", "| snapshot save (etcdctl) | 1.00 s | 1.00 s (1.00-1.00) | 1.00 (1.00-1.00) | (not judged) |"} {
		if !strings.Contains(table, want) {
			t.Errorf("the table lacks %q:\n%s", want, table)
		}
	}
}

func TestParseRssAnon(t *testing.T) {
	status := "Name:\tetcdbench\nVmRSS:\t 1153432 kB\nRssAnon:\t   61440 kB\nRssFile:\t 1091992 kB\n"
	if got := parseRssAnon([]byte(status)); got != 61440*1024 {
		t.Errorf("parseRssAnon = %d, want %d", got, 61440*1024)
	}
	if got := parseRssAnon([]byte("Name:\tx\n")); got != 0 {
		t.Errorf("parseRssAnon without RssAnon = %d, want 0", got)
	}
}

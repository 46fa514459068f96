package cmp

import (
	"math"
	"strings"
	"testing"
	"time"
)

func TestFmt(t *testing.T) {
	tests := []struct {
		name, got, want string
	}{
		{"zero duration", FmtDur(0), "-"},
		{"ns", FmtDur(999), "999ns"},
		{"µs rounded", FmtDur(254976), "255µs"},
		{"µs decimals", FmtDur(40912), "40.9µs"},
		{"s", FmtDur(3051234567), "3.05s"},
		{"ratio", FmtRatio(0.956), "0.96"},
		{"no ratio", FmtRatio(math.NaN()), "n/a"},
		{"band", FmtBand(Target{Lo: 0.9, Hi: 1.1}), "0.90..1.10"},
		{"upper", FmtBand(Target{Hi: 1}), "<= 1.00"},
		{"lower", FmtBand(Target{Lo: 0.95}), ">= 0.95"},
		{"rate", FmtValue(UnitRate, 61825.4), "61.8k"},
		{"low rate", FmtValue(UnitRate, 950.4), "950"},
		{"bandwidth", FmtValue(UnitBandwidth, 1.5*(1<<20)), "1.5 MiB/s"},
		{"duration value", FmtValue(UnitDuration, float64(7*time.Microsecond)), "7µs"},
		{"count", FmtValue(UnitCount, 10029), "10029"},
		{"missing value", FmtValue(UnitRate, math.NaN()), "n/a"},
	}
	for _, tc := range tests {
		if tc.got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, tc.got, tc.want)
		}
	}
}

func TestRenderSummary(t *testing.T) {
	rows := []Row{
		NewRow("total IOPS", UnitRate, []float64{60000}, []float64{57000}, []float64{0.95}, &Target{Lo: 0.95}),
		NewRow("read p99", UnitDuration, []float64{1e6}, []float64{2e6}, []float64{2}, nil),
	}
	rows[0].Pair, rows[1].Pair = "io_uring vs fio libaio", "io_uring vs fio libaio"
	var b strings.Builder
	if err := RenderSummary(&b, 5, rows, []Extra{{Name: "syncs", Fio: "1", Etcd: "2"}}); err != nil {
		t.Fatal(err)
	}
	if err := RenderFooter(&b, rows, "goal"); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"MEDIANS over 5 rounds", "pair", "io_uring vs fio libaio  total IOPS", "60.0k", ">= 0.95", "yes",
		"info", "syncs", "1 of 1 targets met. Targets: goal."} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestTimeColumns(t *testing.T) {
	m := Measurement{Runtime: 2 * time.Second, Wall: 3 * time.Second, CPU: time.Second, SelfCPU: 40912, Base: &Baseline{CPU: 254976}}
	var heads, cells []string
	for _, c := range TimeColumns() {
		heads, cells = append(heads, c.Head), append(cells, c.Value(m))
	}
	if got, want := strings.Join(heads, "|"), "runtime|wall|CPU|fio start-up CPU|etcdbench self CPU"; got != want {
		t.Errorf("heads %q, want %q", got, want)
	}
	if got, want := strings.Join(cells, "|"), "2s|3s|1s|255µs|40.9µs"; got != want {
		t.Errorf("cells %q, want %q", got, want)
	}
	if got := TimeColumns()[3].Value(Measurement{}); got != "-" {
		t.Errorf("start-up CPU without a baseline = %q, want -", got)
	}
}

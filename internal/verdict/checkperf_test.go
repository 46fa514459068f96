package verdict

import (
	"strings"
	"testing"
	"time"
)

func TestJudgeCheckPerf(t *testing.T) {
	good := CheckPerfFigures{TargetRate: 150, Rate: 149.5, Slowest: 40 * time.Millisecond, Stddev: 2 * time.Millisecond, Timing: "counted from the due time"}
	cases := []struct {
		name   string
		mod    func(*CheckPerfFigures)
		failed string // the check that fails, "" for none
		detail string // in the failing verdict's detail
	}{
		{"all pass", func(*CheckPerfFigures) {}, "", ""},
		{"one error fails", func(f *CheckPerfFigures) { f.Failed = 1 }, "check_perf_errors", "1 puts failed"},
		{"90 % exactly fails", func(f *CheckPerfFigures) { f.Rate = 135 }, "check_perf_throughput", "not above 90 %"},
		{"slow throughput fails", func(f *CheckPerfFigures) { f.Rate = 100 }, "check_perf_throughput", "66.7 %"},
		{"slowest over 500 ms fails", func(f *CheckPerfFigures) { f.Slowest = 501 * time.Millisecond }, "check_perf_slowest", "over the 500ms limit"},
		{"stddev over 100 ms fails", func(f *CheckPerfFigures) { f.Stddev = 120 * time.Millisecond }, "check_perf_stddev", "over the 100ms limit"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := good
			c.mod(&f)
			vs := JudgeCheckPerf(CheckPerfDefaults(), f)
			if len(vs) != 4 {
				t.Fatalf("%d verdicts, want 4", len(vs))
			}
			for _, v := range vs {
				if !strings.HasPrefix(v.Source, CheckPerfSource) || v.Detail == "" {
					t.Errorf("%s: source %q, detail %q", v.Check, v.Source, v.Detail)
				}
				want := Pass
				if v.Check == c.failed {
					want = Fail
					if !strings.Contains(v.Detail, c.detail) {
						t.Errorf("%s detail %q does not say %q", v.Check, v.Detail, c.detail)
					}
				}
				if v.Status != want {
					t.Errorf("%s: %s, want %s (%s)", v.Check, v.Status, want, v.Detail)
				}
			}
		})
	}
}

func TestJudgeCheckPerfLimitsAreInclusive(t *testing.T) {
	// etcdctl fails only above 0.5 s and 0.1 s: the limits themselves pass.
	f := CheckPerfFigures{TargetRate: 1000, Rate: 950, Slowest: 500 * time.Millisecond, Stddev: 100 * time.Millisecond}
	if s := Worst(JudgeCheckPerf(CheckPerfDefaults(), f)); s != Pass {
		t.Fatalf("%s at the limits, want PASS", s)
	}
}

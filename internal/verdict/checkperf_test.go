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

// The load models are etcdctl's checkPerfCfgMap, in its order, and a
// capacity cites each by the flag that runs it.
func TestCheckPerfLoads(t *testing.T) {
	want := map[string]struct {
		alias   string
		rate    float64
		clients int
		mark    string
	}{
		"s":  {"small", 150, 50, "etcdctl check perf --load s: 150 puts/s"},
		"m":  {"medium", 1000, 200, "etcdctl check perf --load m: 1000 puts/s"},
		"l":  {"large", 8000, 500, "etcdctl check perf --load l: 8000 puts/s"},
		"xl": {"xLarge", 15000, 1000, "etcdctl check perf --load xl: 15000 puts/s"},
	}
	if len(CheckPerfLoads) != len(want) {
		t.Fatalf("%d load models, want %d", len(CheckPerfLoads), len(want))
	}
	for i, l := range CheckPerfLoads {
		t.Run(l.Name, func(t *testing.T) {
			w, ok := want[l.Name]
			if !ok || l.Alias != w.alias || l.Rate != w.rate || l.Clients != w.clients || l.Conns != w.clients || l.Mark() != w.mark {
				t.Fatalf("%+v (mark %q), want %+v", l, l.Mark(), w)
			}
			if i > 0 && l.Rate <= CheckPerfLoads[i-1].Rate {
				t.Fatalf("%s at %v after %v: want rising rates", l.Name, l.Rate, CheckPerfLoads[i-1].Rate)
			}
		})
	}
}

// A load at any rate has the clients of the smallest model asking for at
// least that rate, the largest's above xl.
func TestCheckPerfLoadAt(t *testing.T) {
	for _, tc := range []struct {
		rate float64
		want string
	}{{1, "s"}, {150, "s"}, {151, "m"}, {1000, "m"}, {8000, "l"}, {9000, "xl"}, {15000, "xl"}, {40000, "xl"}} {
		if got := CheckPerfLoadAt(tc.rate); got.Name != tc.want {
			t.Errorf("at %v puts/s: %s, want %s", tc.rate, got.Name, tc.want)
		}
	}
}

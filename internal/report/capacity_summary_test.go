package report

import (
	"strings"
	"testing"

	"etcdbench/internal/result"
	"etcdbench/internal/verdict"
)

func TestCapacitySummary(t *testing.T) {
	marks := func(rate float64) []result.CapacityMark {
		var ms []result.CapacityMark
		for _, m := range []struct {
			name string
			rate float64
		}{{"s", 150}, {"m", 1000}, {"l", 8000}, {"xl", 15000}} {
			ms = append(ms, result.CapacityMark{Name: m.name, Rate: m.rate, Carried: rate >= m.rate})
		}
		return ms
	}
	for _, tc := range []struct {
		name string
		c    result.Capacity
		want []string
	}{
		{"a knee", result.Capacity{Rate: 1600, Upper: 1740, Unit: "writes/s", Confidence: 0.95, StepConfidence: 0.99, Decided: true, Marks: marks(1600)},
			[]string{"carries 1600-1740 writes/s", "carries m, not l"}},
		// Every step passed up to 14,700/s: xl (15,000) was not tried, not
		// failed, and the rate is not rounded up to one not tried.
		{"every step passed", result.Capacity{Rate: 14700, Unit: "writes/s", Confidence: 0.95, StepConfidence: 0.99, Decided: true, Marks: marks(14700)},
			[]string{"at least 14.7k writes/s, every step passed", "carries l; xl above the rates tried"}},
		// A step below the answer was not decided: not every step passed.
		{"every decided step passed, one undecided", result.Capacity{Rate: 14700, Unit: "writes/s", Confidence: 0.95, StepConfidence: 0.99, Decided: true, Marks: marks(14700),
			Steps: []result.CapacityStep{{Phase: "ladder", Rate: 150, Status: verdict.Warn}, {Phase: "ladder", Rate: 375, Status: verdict.Pass, Decided: true}, {Phase: "ladder", Rate: 14700, Status: verdict.Pass, Decided: true}}},
			[]string{"at least 14.7k writes/s, every decided step passed; 1 undecided, at 150 writes/s", "carries l; xl above the rates tried"}},
		{"none passed", result.Capacity{Rate: 0, Upper: 150, Unit: "writes/s", Confidence: 0.95, StepConfidence: 0.99, Marks: marks(0)},
			[]string{"carries less than 150 writes/s", "carries none, not even s"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := CapacitySummary(&tc.c)
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("%q lacks %q", got, w)
				}
			}
		})
	}
}

func TestSizesFitted(t *testing.T) {
	sizes := func(rate float64) []result.CapacityMark {
		var ms []result.CapacityMark
		for _, m := range []struct {
			name string
			rate float64
		}{{"small", 200}, {"medium", 1000}, {"large", 10000}} {
			ms = append(ms, result.CapacityMark{Name: m.name, Rate: m.rate, Carried: rate >= m.rate})
		}
		return ms
	}
	for rate, want := range map[float64]string{
		50:     "fits no cluster size, below small's 200 requests/s",
		1600:   "fits medium (1000 requests/s), not large (10k)",
		10000:  "fits large (10k requests/s) and above",
		102000: "fits large (10k requests/s) and above",
	} {
		if got := SizesFitted(sizes(rate)); !strings.Contains(got, want) {
			t.Errorf("SizesFitted at %v = %q, want %q", rate, got, want)
		}
	}
	if got := SizesFitted(nil); got != "" {
		t.Errorf("SizesFitted(nil) = %q", got)
	}
	c := result.Capacity{Rate: 1600, Upper: 1740, Unit: "writes/s", Sizes: sizes(1600)}
	if got := CapacitySummary(&c); !strings.Contains(got, "hardware guide") {
		t.Errorf("summary %q lacks the cluster sizes", got)
	}
}

func TestEstimateSummary(t *testing.T) {
	for _, tc := range []struct {
		e    result.CapacityEstimate
		want string
	}{
		{result.CapacityEstimate{Rate: 9600, Upper: 10500, LimitedBy: "cpu"}, "9600-10.5k puts/s, limited by cpu"},
		{result.CapacityEstimate{Rate: 50, LimitedBy: "none"}, "at least 50 puts/s, limited by none"},
		{result.CapacityEstimate{Rate: 25, Upper: 27, PassedAbove: 54, LimitedBy: "cpu"}, "unstable, 25-54 puts/s (carried 25, failed at 27, carried 54 above it), limited by cpu"},
	} {
		if got := EstimateSummary(&tc.e); !strings.Contains(got, tc.want) {
			t.Errorf("EstimateSummary(%+v) = %q, want %q", tc.e, got, tc.want)
		}
	}
}

// etcd capacity's verdict has no confidence level: its text says how it
// was decided instead of "decided at 0 % confidence".
func TestCapacityVerdictWithoutLevel(t *testing.T) {
	th := verdict.Defaults()
	var b strings.Builder
	textVerdict(&errWriter{w: &b}, verdict.JudgeCapacity(th.CapacityMin, th.CapacityHeavy, 137, true, 0, "check perf's rules"))
	if got := b.String(); strings.Contains(got, "0 %") || !strings.Contains(got, "each step judged by its rules over its whole length, not a statistical bound") {
		t.Fatalf("verdict text:\n%s", got)
	}
}

package report

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"etcdbench/internal/result"
	"etcdbench/internal/stats"
	"etcdbench/internal/verdict"
)

// slower returns sample with every fdatasync latency multiplied by f and
// the IOPS divided by it, as the same disk under a worse setting would give.
func slower(t *testing.T, f float64) *result.Result {
	t.Helper()
	r := sample(t)
	h := stats.NewLatencyHistogram()
	for i := int64(1); i <= 10000; i++ {
		stats.Record(h, time.Duration(f*float64(200_000+i*30)))
	}
	stats.Record(h, time.Duration(f*float64(12*time.Millisecond)))
	enc, err := stats.Encode(h)
	if err != nil {
		t.Fatal(err)
	}
	ci := stats.PercentileCI(h, 0.99, float64(h.TotalCount()), 0.95)
	wl := &r.Workloads[0]
	l := &wl.Latencies[0]
	l.Summary, l.Histogram, l.P99CI = stats.Summarize(h), enc, &ci
	wl.OpsPerSec /= f
	return r
}

func TestCompareGolden(t *testing.T) {
	c, err := NewComparison([]*result.Result{sample(t), slower(t, 3), slower(t, 1.01)}, []string{"before.json", "after.json", "same.json"})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := CompareText(&b, c); err != nil {
		t.Fatal(err)
	}
	golden(t, "compare.txt", b.Bytes())
	row := func(fig string) ComparedRow {
		for _, r := range c.Rows {
			if r.Figure == fig {
				return r
			}
		}
		t.Fatalf("no row %q", fig)
		return ComparedRow{}
	}
	if r := row("fdatasync p99"); r.Best != "A" || r.Deltas[1] < 1.9 || r.Deltas[1] > 2.1 {
		t.Errorf("p99 row %+v: want A better, B about +200 %%", r)
	}
	if r := row("operations per second"); r.Best != "A" || r.Better != "higher" {
		t.Errorf("IOPS row %+v", r)
	}
	if r := row("verdict wal_fsync_p99"); r.Best != "similar" {
		t.Errorf("verdict row %+v: all pass", r)
	}
	// 1 % apart with overlapping confidence intervals is no difference.
	c2, err := NewComparison([]*result.Result{sample(t), slower(t, 1.01)}, []string{"a", "b"})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range c2.Rows {
		if r.Better != "" && r.Best != "similar" {
			t.Errorf("%s: %s called better for a 1 %% difference", r.Figure, r.Best)
		}
	}
}

func TestCompareRejectsMixedWorkloads(t *testing.T) {
	other := sample(t)
	other.Workloads[0].Name = "backend"
	_, err := NewComparison([]*result.Result{sample(t), other}, []string{"wal.json", "backend.json"})
	if !errors.Is(err, ErrMixedWorkloads) || !strings.Contains(err.Error(), "backend.json") {
		t.Fatalf("err = %v", err)
	}
	if _, err := NewComparison([]*result.Result{sample(t)}, []string{"a"}); err == nil {
		t.Fatal("compared one result")
	}
}

func TestCompareHTMLOverlaysCDFs(t *testing.T) {
	c, err := NewComparison([]*result.Result{readFixture(t, "disk-wal.json"), readFixture(t, "disk-wal-4m.json")}, []string{"8s.json", "4m.json"})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := CompareHTML(&b, c); err != nil {
		t.Fatal(err)
	}
	s := b.String()
	if !strings.Contains(s, `id="cmp-0-fdatasync-cdf"`) || strings.Count(s, `class="series"`) < 4 || !strings.Contains(s, `class="legend"`) {
		t.Error("compare page lacks the overlaid CDFs with a legend")
	}
	if !strings.Contains(s, "8s.json") || !strings.Contains(s, "B vs A") {
		t.Error("compare page lacks the runs or the deltas")
	}
}

func TestFigureDirection(t *testing.T) {
	for _, c := range []struct {
		f    result.Figure
		want string
	}{
		{result.Figure{Name: "read_iops", Unit: "ops/s"}, "higher"},
		{result.Figure{Name: "time_to_durable", Unit: "s"}, "lower"},
		{result.Figure{Name: "failed_requests", Unit: "count"}, "lower"},
		{result.Figure{Name: "p99_ratio", Unit: "x"}, "lower"},
		{result.Figure{Name: "member0_db_size", Unit: "B"}, ""},
	} {
		if got := figureDirection(c.f); got != c.want {
			t.Errorf("%s: %q, want %q", c.f.Name, got, c.want)
		}
	}
	_ = verdict.Pass
}

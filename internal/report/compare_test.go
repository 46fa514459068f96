package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"reflect"
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

// Runs that differ in a parameter that shapes the load are compared with a
// warning naming it, in every format; parameters that only name the run or
// set its length are expected to differ and are not listed.
func TestCompareWarnsOfParameterDifferences(t *testing.T) {
	a, b := sample(t), slower(t, 3)
	b.Workloads[0].Parameters = map[string]any{"block_size": 65536, "runtime_ns": 60e9, "endpoints": []string{"http://127.0.0.1:2379"}, "clients": 4}
	a.Workloads[0].Parameters["runtime_ns"] = 20e9
	c, err := NewComparison([]*result.Result{a, b}, []string{"2300.json", "64k.json"})
	if err != nil {
		t.Fatal(err)
	}
	want := []ParamDifference{
		{Workload: "wal", Parameter: "block_size", Values: []string{"2300", "65536"}},
		{Workload: "wal", Parameter: "clients", Values: []string{"", "4"}},
	}
	if !reflect.DeepEqual(c.Differences, want) {
		t.Fatalf("differences %+v, want %+v", c.Differences, want)
	}

	var text bytes.Buffer
	if err := CompareText(&text, c); err != nil {
		t.Fatal(err)
	}
	golden(t, "compare-params.txt", text.Bytes())
	// The warning comes before the table.
	warn, table := strings.Index(text.String(), "WARNING: the runs differ"), strings.Index(text.String(), "workload  figure")
	if warn < 0 || table < warn || !strings.Contains(text.String(), "wal block_size: A 2300, B 65536") || !strings.Contains(text.String(), "wal clients: A (none), B 4") {
		t.Errorf("text lacks the warning above the table:\n%s", text.String())
	}

	var page bytes.Buffer
	if err := CompareHTML(&page, c); err != nil {
		t.Fatal(err)
	}
	h := page.String()
	if w, runs := strings.Index(h, `<section id="differences">`), strings.Index(h, `<section id="runs">`); w < 0 || runs < w || !strings.Contains(h, "wal block_size: A 2300, B 65536") {
		t.Error("the HTML page lacks the warning above the runs")
	}

	var js bytes.Buffer
	if err := CompareJSON(&js, c); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Differences []ParamDifference `json:"parameter_differences"`
		Rows        []struct {
			Figure string     `json:"figure"`
			Unit   string     `json:"unit"`
			Values []float64  `json:"values"`
			Deltas []*float64 `json:"deltas"`
		} `json:"rows"`
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
		t.Fatalf("comparison JSON: %v\n%s", err, js.String())
	}
	if !reflect.DeepEqual(doc.Differences, want) {
		t.Errorf("JSON differences %+v", doc.Differences)
	}
	if len(doc.Rows) != len(c.Rows) {
		t.Fatalf("%d rows in JSON, %d compared", len(doc.Rows), len(c.Rows))
	}
	for _, r := range doc.Rows {
		if len(r.Deltas) != 2 || r.Deltas[0] != nil {
			t.Errorf("%s: deltas %v, want null then B's", r.Figure, r.Deltas)
			continue
		}
		switch {
		case r.Unit == "status" && r.Deltas[1] != nil:
			t.Errorf("%s: a verdict has no delta, got %v", r.Figure, *r.Deltas[1])
		case r.Unit != "status" && r.Values[0] != 0:
			if d := r.Deltas[1]; d == nil || math.Abs(*d-(r.Values[1]-r.Values[0])/r.Values[0]) > 1e-9 {
				t.Errorf("%s: delta %v for %v -> %v", r.Figure, d, r.Values[0], r.Values[1])
			}
		}
	}
}

// Two real saved runs of disk wal, one time-based and one of a size, differ
// only in how long they ran: no warning.
func TestCompareRunLengthIsNoDifference(t *testing.T) {
	a, b := readFixture(t, "disk-wal.json"), readFixture(t, "disk-wal-4m.json")
	if reflect.DeepEqual(a.Workloads[0].Parameters, b.Workloads[0].Parameters) {
		t.Fatal("the fixtures have the same parameters: nothing tested")
	}
	c, err := NewComparison([]*result.Result{a, b}, []string{"8s.json", "4m.json"})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Differences) != 0 {
		t.Errorf("differences %+v, want none (mode, runtime and size are expected to differ)", c.Differences)
	}
	var text bytes.Buffer
	if err := CompareText(&text, c); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(text.String(), "WARNING") {
		t.Errorf("warning without a difference:\n%s", text.String())
	}
}

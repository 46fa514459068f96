package metrics

import (
	"errors"
	"os"
	"testing"
)

func readFixture(t testing.TB) []byte {
	b, err := os.ReadFile("testdata/etcd-metrics.txt")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestParseAndHistogramOf(t *testing.T) {
	f, err := Parse(readFixture(t))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	h, err := HistogramOf(f, "etcd_disk_wal_fsync_duration_seconds")
	if err != nil {
		t.Fatalf("HistogramOf: %v", err)
	}
	if h.Count != 100 || len(h.Buckets) != 6 || h.Buckets[5].Count != 100 {
		t.Fatalf("histogram %+v", h)
	}
	// rank 99 is the top of (8 ms, 16 ms].
	if q := Quantile(0.99, h); !same(q, 0.016) {
		t.Errorf("p99 %g, want 0.016", q)
	}
	// rank 50 in (4 ms, 8 ms]: 0.004 + 0.004*10/40.
	if q := Quantile(0.5, h); !same(q, 0.005) {
		t.Errorf("p50 %g, want 0.005", q)
	}
	two, err := HistogramOf(f, "two_series")
	if err != nil {
		t.Fatalf("two series: %v", err)
	}
	if two.Count != 6 || two.Buckets[0].Count != 4 || two.Sum != 8 {
		t.Errorf("sum of two series: %+v", two)
	}
	if _, err := HistogramOf(f, "nope"); !errors.Is(err, ErrNoMetric) {
		t.Errorf("missing metric: %v", err)
	}
	if _, err := HistogramOf(f, "etcd_server_has_leader"); !errors.Is(err, ErrNotHistogram) {
		t.Errorf("gauge: %v", err)
	}
}

func TestParseRejectsGarbage(t *testing.T) {
	for _, in := range []string{"not metrics at all {", "# TYPE x histogram\nx_bucket{le=\"a\"} 1\n"} {
		if _, err := Parse([]byte(in)); !errors.Is(err, ErrParse) {
			t.Errorf("Parse(%q): %v, want ErrParse", in, err)
		}
	}
}

// FuzzParse feeds arbitrary bytes to Parse and every histogram it finds
// to Quantile: nothing may panic, and a quantile of a non-empty histogram
// is never below the lowest bucket's lower end.
func FuzzParse(f *testing.F) {
	f.Add(readFixture(f))
	f.Add([]byte("# TYPE h histogram\nh_bucket{le=\"1\"} 1\nh_count 1\n"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, b []byte) {
		fams, err := Parse(b)
		if err != nil {
			return
		}
		for name := range fams {
			h, err := HistogramOf(fams, name)
			if err != nil {
				continue
			}
			for _, q := range []float64{0, 0.5, 0.99, 1} {
				_ = Quantile(q, h)
			}
			if _, err := Delta(h, h); err != nil && !errors.Is(err, ErrReset) {
				t.Errorf("Delta of %s with itself: %v", name, err)
			}
		}
	})
}

func TestValueOfAndHistogramDelta(t *testing.T) {
	f, err := Parse(readFixture(t))
	if err != nil {
		t.Fatal(err)
	}
	if v, err := ValueOf(f, "grpc_server_handled_total"); err != nil || v != 12 {
		t.Errorf("counter sum %v, %v: want 12", v, err)
	}
	if v, err := ValueOf(f, "etcd_server_has_leader"); err != nil || v != 1 {
		t.Errorf("gauge %v, %v: want 1", v, err)
	}
	if _, err := ValueOf(f, "two_series"); err == nil {
		t.Error("a histogram read as a value")
	}
	if _, err := ValueOf(f, "nope"); !errors.Is(err, ErrNoMetric) {
		t.Errorf("missing: %v", err)
	}
	empty := Families{}
	if h, ok := HistogramDelta(empty, f, "two_series"); !ok || h.Count != 6 {
		t.Errorf("missing before: %+v %v, want the after histogram", h, ok)
	}
	if h, ok := HistogramDelta(f, f, "two_series"); !ok || h.Count != 0 {
		t.Errorf("same scrape: %+v %v, want empty", h, ok)
	}
	if _, ok := HistogramDelta(f, empty, "two_series"); ok {
		t.Error("missing after accepted")
	}
}

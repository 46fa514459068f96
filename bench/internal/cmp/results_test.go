package cmp

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A result file written by SaveResult reads back with its figures named
// from the rows, the load average of the run, and a second run of the
// same day in a file of its own.
func TestSaveResult(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "results")
	rows := []Row{
		NewRow("fdatasync p99", UnitDuration, []float64{100, 300}, []float64{110, 270}, []float64{1.1, 0.9}, nil),
		{Pair: "eBPF trace / none", Metric: "throughput", Ratio: 0.98, RatioMin: 0.89, RatioMax: 1.05},
	}
	r := Result{Bench: "wal-vs-fio", Source: "measured: test", Rounds: 2, Figures: RowFigures(rows), Table: "metric  ratio\n"}
	began := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	for range 2 {
		if err := SaveResult(dir, r, 1.5, began); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"2026-11-26.json", "2026-11-26-2.json"} {
		got, err := ReadResult(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if got.Date != "2026-11-26" || got.Load == nil || got.Load[0] != 1.5 || got.Rounds != 2 || got.Table != r.Table {
			t.Errorf("%s: %+v", name, got)
		}
		for k, want := range map[string]float64{
			"fdatasync_p99_ratio": 1.0, "fdatasync_p99_ratio_min": 0.9, "fdatasync_p99_ratio_max": 1.1,
			"fdatasync_p99_fio": 200, "fdatasync_p99_etcdbench": 190, "ebpf_trace_none_throughput_ratio": 0.98,
		} {
			if v, ok := got.Figures[k]; !ok || v < want-1e-9 || v > want+1e-9 {
				t.Errorf("%s: figure %s = %v (present %v), want %v", name, k, v, ok, want)
			}
		}
	}
	if err := SaveResult("", r, 0, began); err != nil {
		t.Errorf("no --results: %v", err)
	}
}

// A result file without what a reader needs is refused.
func TestReadResultRefusesIncomplete(t *testing.T) {
	p := filepath.Join(t.TempDir(), "r.json")
	for _, body := range []string{`{"bench":"x","date":"2026-11-26","figures":{}}`, `{"bench":"x","date":"d","source":"s","figures":{},"extra":1}`, `not json`} {
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadResult(p); err == nil {
			t.Errorf("%s: read without error", body)
		}
	}
}

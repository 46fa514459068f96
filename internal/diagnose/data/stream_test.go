package data

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"etcdbench/internal/testutil/kubedata"
)

// fillDB writes cfg through an embedded etcd in dir and stops it; it
// returns the db's path.
func fillDB(tb testing.TB, dir string, cfg kubedata.Config) string {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	dataDir, _, err := kubedata.Embedded(ctx, dir, cfg, nil)
	if err != nil {
		tb.Fatal(err)
	}
	return filepath.Join(dataDir, "member", "snap", "db")
}

// TestAnalysisStreams: the analysis' heap does not grow with the db's
// bytes: a db of few keys with a long history of large values is
// analysed with allocations a small fraction of its size (the values
// are never copied, only their lengths read).
func TestAnalysisStreams(t *testing.T) {
	path := fillDB(t, t.TempDir(), kubedata.Config{Nodes: 8, NodeLeaseWrites: 400, ConfigMaps: 2000, ValueBytes: 8 << 10, Namespaces: 2, Seed: 5})
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	a, err := Analyze(context.Background(), path, 0)
	if err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	alloc := int64(after.TotalAlloc - before.TotalAlloc)
	t.Logf("%d revisions, %d B db analysed with %d B allocated in %v", a.Revisions, a.DB.SizeBytes, alloc, a.Duration)
	if alloc > a.DB.SizeBytes/8 {
		t.Errorf("the analysis allocated %d B for a %d B db: it does not stream", alloc, a.DB.SizeBytes)
	}
}

// BenchmarkAnalyze analyses a db filled by kubedata up to
// ETCDBENCH_BENCH_DB_BYTES (default 64 MiB) in ETCDBENCH_BENCH_DB_DIR
// (default a temporary directory; a db already there is reused, so a
// large one is written once).
func BenchmarkAnalyze(b *testing.B) {
	size := int64(64 << 20)
	if s := os.Getenv("ETCDBENCH_BENCH_DB_BYTES"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			b.Fatal(err)
		}
		size = n
	}
	dir := os.Getenv("ETCDBENCH_BENCH_DB_DIR")
	if dir == "" {
		dir = b.TempDir()
	}
	path := filepath.Join(dir, "member0", "member", "snap", "db")
	if _, err := os.Stat(path); err != nil {
		cfg := kubedata.Small()
		cfg.TargetBytes, cfg.Clients, cfg.ValueBytes = size, 32, 4<<10
		path = fillDB(b, dir, cfg)
	}
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(st.Size())
	b.ReportAllocs()
	var revs int64
	for b.Loop() {
		a, err := Analyze(context.Background(), path, 0)
		if err != nil {
			b.Fatal(err)
		}
		revs = a.Revisions
	}
	b.ReportMetric(float64(revs), "revisions")
}

package disk

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"etcdbench/internal/fio"
)

// TestWALMatchesFioRecipe runs fio's etcd recipe and the WAL loop with the
// same --bs and --size on the same directory. They must issue the same number
// of fdatasyncs, and their median fdatasync latencies must agree within a
// factor that a shared, noisy machine cannot break; the precise ratios are
// measured by bench/wal-vs-fio, not asserted here.
func TestWALMatchesFioRecipe(t *testing.T) {
	fioPath, err := exec.LookPath("fio")
	if err != nil {
		t.Skip("fio is not installed (apt-get install fio; .ci/run installs it): skipping the comparison with fio")
	}
	dir := t.TempDir()
	const bs, size = 2300, 4 << 20
	out, err := exec.Command(fioPath, "--name=etcdbench-compare", "--rw=write", "--ioengine=sync", "--fdatasync=1",
		"--directory="+dir, "--size=4m", "--bs=2300", "--output-format=json").Output()
	if err != nil {
		t.Fatalf("fio: %v", err)
	}
	o, err := fio.Parse(out)
	if err != nil {
		t.Fatal(err)
	}
	fj := o.Jobs[0]
	if fj.Sync == nil {
		t.Fatalf("fio %s reports no sync latencies (needs fio >= 3.5)", o.Version)
	}
	fioP50, ok := fj.Sync.Lat.At(50)
	if !ok || fj.Error != 0 {
		t.Fatalf("fio job %+v", fj)
	}

	wdir := filepath.Join(dir, "etcdbench")
	if err := os.Mkdir(wdir, 0o755); err != nil {
		t.Fatal(err)
	}
	run, err := RunWAL(context.Background(), wdir, WALConfig{BlockSize: bs, Size: size, Mode: ModeSize, Rule: rule(10 * time.Millisecond)})
	if err != nil {
		t.Fatal(err)
	}
	if run.Ops != fj.Sync.Lat.N || run.Bytes != fj.Write.IOBytes {
		t.Fatalf("etcdbench did %d fdatasyncs / %d bytes, fio %d / %d", run.Ops, run.Bytes, fj.Sync.Lat.N, fj.Write.IOBytes)
	}
	ours := float64(run.Sync.ValueAtPercentile(50))
	ratio := ours / float64(fioP50)
	t.Logf("fdatasync p50: etcdbench %.0f ns, fio %d ns, ratio %.2f", ours, fioP50, ratio)
	if ratio < 1.0/3 || ratio > 3 {
		t.Fatalf("median fdatasync differs from fio's by a factor %.2f: not the same I/O", ratio)
	}
}

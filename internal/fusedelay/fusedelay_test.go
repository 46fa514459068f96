package fusedelay_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"etcdbench/internal/testutil/fusedelay"
)

// timedSyncs writes and fdatasyncs a file under dir n times and returns
// the slowest and fastest sync.
func timedSyncs(t *testing.T, dir string, n int) (minD, maxD time.Duration) {
	t.Helper()
	f, err := os.Create(filepath.Join(dir, "f"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	minD = time.Hour
	for range n {
		if _, err := f.Write(make([]byte, 4096)); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		if err := unix.Fdatasync(int(f.Fd())); err != nil {
			t.Fatal(err)
		}
		d := time.Since(start)
		minD, maxD = min(minD, d), max(maxD, d)
	}
	return minD, maxD
}

func TestDelaysSyncsAndPassesDataThrough(t *testing.T) {
	backing := t.TempDir()
	const delay = 30 * time.Millisecond
	m := fusedelay.Mount(t, backing, delay)
	fastest, _ := timedSyncs(t, m.Dir, 5)
	// A bound that cannot flake: no sync returns before its delay.
	if fastest < delay {
		t.Errorf("fastest fdatasync %v, want at least the %v delay", fastest, delay)
	}
	if got := m.Syncs(); got < 5 {
		t.Errorf("%d syncs served, want at least 5", got)
	}
	st, err := os.Stat(filepath.Join(backing, "f"))
	if err != nil || st.Size() != 5*4096 {
		t.Fatalf("backing file: %v %v, want 20480 bytes written through", st, err)
	}
	// Without a delay the same syncs are not held back.
	m.SetDelay(0)
	_, slowest := timedSyncs(t, m.Dir, 3)
	if slowest >= 10*delay {
		t.Logf("undelayed fdatasync took %v (a loaded machine?)", slowest)
	}
	if err := os.Rename(filepath.Join(m.Dir, "f"), filepath.Join(m.Dir, "g")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(backing, "g")); err != nil {
		t.Fatalf("rename not passed through: %v", err)
	}
}

func TestCloseUnmounts(t *testing.T) {
	if err := fusedelay.Usable(); err != nil {
		t.Skip(err)
	}
	mp, backing := t.TempDir(), t.TempDir()
	f, err := fusedelay.New(backing, mp, 0)
	if err != nil {
		t.Skip(err)
	}
	if err := os.WriteFile(filepath.Join(mp, "x"), []byte("x"), 0o600); err != nil {
		f.Close()
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	// After unmounting, the mount point is the empty directory again.
	if ents, err := os.ReadDir(mp); err != nil || len(ents) != 0 {
		t.Fatalf("mount point after Close: %v %v, want empty", ents, err)
	}
	if err := f.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

func TestRateCapSpacesSyncs(t *testing.T) {
	m := fusedelay.Mount(t, t.TempDir(), 0)
	const perSec, burst = 50, 3 // a token every 20 ms
	m.SetRateCap(perSec, burst)
	start := time.Now()
	const n = 13
	timedSyncs(t, m.Dir, n)
	// The bucket starts with burst tokens, so n syncs span at least
	// n-burst intervals.
	if got, want := time.Since(start), (n-burst)*time.Second/perSec; got < want {
		t.Errorf("%d syncs under a %d/s cap took %v, want at least %v", n, perSec, got, want)
	}
	m.SetRateCap(0, 1)
	if d := m.WaitAt(time.Now()); d != 0 {
		t.Errorf("without cap or delay a sync waits %v", d)
	}
}

func TestBandwidthMakesSyncsWaitForTheirBytes(t *testing.T) {
	m := fusedelay.Mount(t, t.TempDir(), 0)
	const bw = 1 << 20 // 1 MiB/s: 4 KiB take about 3.9 ms
	m.SetBandwidth(bw)
	fastest, _ := timedSyncs(t, m.Dir, 5) // each sync flushes one 4 KiB write
	if want := 4096 * time.Second / bw; fastest < want {
		t.Errorf("fastest sync of 4 KiB at 1 MiB/s took %v, want at least %v", fastest, want)
	}
	f, err := os.OpenFile(filepath.Join(m.Dir, "f"), os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(make([]byte, 100<<10)); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := unix.Fdatasync(int(f.Fd())); err != nil {
		t.Fatal(err)
	}
	if got, want := time.Since(start), (100<<10)*time.Second/bw; got < want {
		t.Errorf("sync of 100 KiB at 1 MiB/s took %v, want at least %v", got, want)
	}
}

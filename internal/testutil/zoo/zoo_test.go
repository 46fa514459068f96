package zoo

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"etcdbench/internal/testutil"
)

// diskDir is a directory on a real disk: the package's own, since
// t.TempDir may be on tmpfs, which no block throttle holds.
func diskDir(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	d, err := os.MkdirTemp(wd, ".zootest-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

// ddSync runs dd in the place (count writes of bs bytes, each with
// O_DSYNC: a write and an fdatasync) and returns its wall time.
func ddSync(t *testing.T, p *Place, bs, count int) time.Duration {
	t.Helper()
	if _, err := exec.LookPath("dd"); err != nil {
		t.Skip("skipping: no dd")
	}
	cmd := p.Command(context.Background(), "dd", "if=/dev/zero", "of="+filepath.Join(p.Dir, "dd"),
		"bs="+strconv.Itoa(bs), "count="+strconv.Itoa(count), "oflag=dsync", "status=none")
	start := time.Now()
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("dd: %v %s", err, b)
	}
	return time.Since(start)
}

func TestPlain(t *testing.T) {
	dir := t.TempDir()
	p, err := Plain().Setup(context.Background(), dir)
	if err != nil || p.Dir != dir || p.Cgroup != nil {
		t.Fatalf("plain: %+v %v", p, err)
	}
	cmd := p.Command(context.Background(), "true")
	if cmd.Args[0] != "true" {
		t.Errorf("plain wrapped the command: %v", cmd.Args)
	}
}

func TestIOPSCap(t *testing.T) {
	const limit = 200
	p := IOPSCap(limit).SetupT(t, diskDir(t))
	before, _, err := p.Cgroup.Writes()
	if err != nil {
		t.Fatal(err)
	}
	const syncs = 100
	took := ddSync(t, p, 4096, syncs)
	after, _, err := p.Cgroup.Writes()
	if err != nil {
		t.Fatal(err)
	}
	ios := float64(after - before)
	rate := ios / took.Seconds()
	t.Logf("in the cgroup: %d dsync writes in %v: %.0f syncs/s, %.0f device writes (%.1f a sync), %.0f writes/s (cap %d)",
		syncs, took.Round(time.Millisecond), syncs/took.Seconds(), ios, ios/syncs, rate, limit)
	if ios < syncs {
		t.Fatalf("the cgroup counted %.0f writes for %d synced writes: dd did not run in it", ios, syncs)
	}
	// The throttle lets a slice's worth ahead; it never lets the rate far
	// past the cap. The lower bound is the disk's own speed, far above.
	if rate > 1.5*limit || rate < 0.3*limit {
		t.Errorf("device writes %.0f/s in the cgroup, want near the cap %d", rate, limit)
	}
	// Outside the cgroup the same writes are not held back.
	outside := Plain().SetupT(t, diskDir(t))
	free := ddSync(t, outside, 4096, syncs)
	t.Logf("outside: %.0f syncs/s", syncs/free.Seconds())
}

func TestBandwidthCap(t *testing.T) {
	const limit = 1 << 20
	p := BandwidthCap(limit).SetupT(t, diskDir(t))
	_, before, err := p.Cgroup.Writes()
	if err != nil {
		t.Fatal(err)
	}
	took := ddSync(t, p, 64<<10, 24)
	_, after, err := p.Cgroup.Writes()
	if err != nil {
		t.Fatal(err)
	}
	rate := float64(after-before) / took.Seconds()
	t.Logf("%d bytes in %v: %.0f KiB/s (cap %d KiB/s)", after-before, took.Round(time.Millisecond), rate/1024, limit>>10)
	if after-before < 24*64<<10 {
		t.Fatalf("the cgroup counted %d bytes, dd wrote %d: dd did not run in it", after-before, 24*64<<10)
	}
	if rate > 1.5*limit || rate < 0.3*limit {
		t.Errorf("%.0f bytes/s in the cgroup, want near the cap %d", rate, limit)
	}
}

// syncTimes times n write+fdatasync pairs of this process in dir.
func syncTimes(t *testing.T, dir string, n int) []time.Duration {
	t.Helper()
	f, err := os.Create(filepath.Join(dir, "syncs"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 512)
	d := make([]time.Duration, n)
	for i := range d {
		start := time.Now()
		if _, err := f.Write(buf); err != nil {
			t.Fatal(err)
		}
		if err := unix.Fdatasync(int(f.Fd())); err != nil {
			t.Fatal(err)
		}
		d[i] = time.Since(start)
	}
	return d
}

func TestFUSERateCap(t *testing.T) {
	p := FUSERateCap(50, 4).SetupT(t, "")
	start := time.Now()
	syncTimes(t, p.Dir, 30)
	took := time.Since(start)
	// 30 syncs through a bucket of 4 at 50/s take at least 26/50 s.
	if want := 26 * time.Second / 50; took < want {
		t.Errorf("30 syncs took %v, want at least %v", took, want)
	}
}

func TestFUSESlowSync(t *testing.T) {
	p := FUSESlowSync(5*time.Millisecond, 1_000_000).SetupT(t, "")
	for i, d := range syncTimes(t, p.Dir, 10) {
		// Each sync waits 5 ms plus its 512 bytes at 1 MB/s.
		if d < 5*time.Millisecond {
			t.Errorf("sync %d took %v, want at least 5ms", i, d)
		}
	}
}

func TestLatencyTail(t *testing.T) {
	const median, p99, seed = 2 * time.Millisecond, 12 * time.Millisecond, 3
	p := LatencyTail(median, p99, seed).SetupT(t, "")
	const n = 150
	got := syncTimes(t, p.Dir, n)
	// The file's creation syncs nothing; each of this test's syncs drew
	// the next delay, in order, and took at least as long.
	draw := LogNormal(median, p99, seed)
	want := make([]time.Duration, n)
	for i := range want {
		want[i] = draw()
	}
	slices.Sort(got)
	slices.Sort(want)
	for i := range got {
		if got[i] < want[i] {
			t.Fatalf("the %d-th shortest sync took %v, under the %d-th shortest delay drawn %v", i, got[i], i, want[i])
		}
	}
	t.Logf("syncs: median %v, p99 %v (drawn: %v, %v)", got[n/2], got[n*99/100], want[n/2], want[n*99/100])
	if want[n*99/100] < 3*want[n/2] {
		t.Errorf("drawn p99 %v is no tail over the median %v", want[n*99/100], want[n/2])
	}
}

func TestBurstBucket(t *testing.T) {
	const peak, baseline = 1000, 100
	p := BurstBucket(peak, baseline, 300).SetupT(t, diskDir(t))
	type sample struct {
		at  time.Duration
		ios int64
	}
	var samples []sample
	start := time.Now()
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		tk := time.NewTicker(50 * time.Millisecond)
		defer tk.Stop()
		for {
			ios, _, err := p.Cgroup.Writes()
			if err == nil {
				samples = append(samples, sample{time.Since(start), ios})
			}
			select {
			case <-stop:
				return
			case <-tk.C:
			}
		}
	}()
	ddSync(t, p, 4096, 200)
	close(stop)
	<-done
	notes := p.Notes()
	t.Logf("notes: %v", notes)
	if len(notes) == 0 || !strings.Contains(notes[0], "credits spent") {
		t.Fatalf("the credits were never spent: notes %v", notes)
	}
	// The busiest 300 ms ran above the baseline; the last second at it.
	var fastest float64
	for i := range samples {
		for j := i + 1; j < len(samples); j++ {
			if dt := samples[j].at - samples[i].at; dt >= 300*time.Millisecond {
				fastest = max(fastest, float64(samples[j].ios-samples[i].ios)/dt.Seconds())
				break
			}
		}
	}
	last := samples[len(samples)-1]
	i := len(samples) - 1
	for i > 0 && last.at-samples[i].at < time.Second {
		i--
	}
	tail := float64(last.ios-samples[i].ios) / (last.at - samples[i].at).Seconds()
	t.Logf("fastest 300 ms: %.0f writes/s; last second: %.0f writes/s (peak %d, baseline %d)", fastest, tail, peak, baseline)
	if fastest < 2*baseline {
		t.Errorf("never ran above the baseline: fastest %.0f writes/s", fastest)
	}
	if tail > 1.5*baseline {
		t.Errorf("after the credits: %.0f writes/s, want about the baseline %d", tail, baseline)
	}
}

func TestCompetingWriter(t *testing.T) {
	const rate = 100
	dir := t.TempDir()
	p, err := CompetingWriter(rate, 4096).Setup(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	testutil.Poll(30*time.Second, func() bool { return p.Competitor.Syncs() >= 20 })
	n, took := p.Competitor.Syncs(), time.Since(start)
	if n < 20 {
		t.Fatalf("the writer synced %d times in %v", n, took)
	}
	// A ticker never runs ahead of its rate.
	if got := float64(n) / took.Seconds(); got > 1.2*rate {
		t.Errorf("the writer synced %.0f times a second, want at most %d", got, rate)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	// Close returns once the writer's goroutine has ended and removed
	// its file.
	if _, err := os.Stat(filepath.Join(dir, "competing-writer")); !os.IsNotExist(err) {
		t.Errorf("the writer's file is still there after Close: %v", err)
	}
}

func TestRAMDisk(t *testing.T) {
	d, err := NewRAMDisk(context.Background(), 64<<20)
	if errors.Is(err, ErrUnavailable) {
		t.Skipf("skipping: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	t.Cleanup(func() {
		if !closed {
			d.Close()
		}
	})
	dev, err := DeviceOf(d.Dir)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join("/sys/block", filepath.Base(d.Loop), "dev"))
	if err != nil || strings.TrimSpace(string(want)) != dev {
		t.Fatalf("the RAM disk's directory is on %s, its loop device is %q (%v)", dev, want, err)
	}
	// The block throttle holds a cgroup's writes on it too.
	const limit = 300
	p := IOPSCap(limit).SetupT(t, d.Dir)
	took := ddSync(t, p, 4096, 100)
	ios, _, err := p.Cgroup.Writes()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("on the RAM disk, capped at %d: %.0f syncs/s, %.0f writes/s", limit, 100/took.Seconds(), float64(ios)/took.Seconds())
	if rate := float64(ios) / took.Seconds(); ios < 100 || rate > 1.5*limit {
		t.Errorf("%d writes, %.0f/s on the RAM disk capped at %d", ios, rate, limit)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	closed = true
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if isMounted(d.Dir) {
		t.Errorf("%s is still mounted", d.Dir)
	}
	if _, err := os.Stat(d.image); !os.IsNotExist(err) {
		t.Errorf("the image %s is still there: %v", d.image, err)
	}
}

// A bucket whose credits are spent on request runs at its baseline from
// the first write: what a measurement of the sustained rate starts from.
func TestBurstBucketSpend(t *testing.T) {
	const peak, baseline = 1000, 100
	p := BurstBucket(peak, baseline, 30_000).SetupT(t, diskDir(t))
	if p.Spend == nil {
		t.Fatal("a burst bucket's place has no Spend")
	}
	if err := p.Spend(context.Background()); err != nil {
		t.Fatal(err)
	}
	ios0, _, err := p.Cgroup.Writes()
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	ddSync(t, p, 4096, 100)
	took := time.Since(start)
	ios1, _, err := p.Cgroup.Writes()
	if err != nil {
		t.Fatal(err)
	}
	rate := float64(ios1-ios0) / took.Seconds()
	t.Logf("after Spend: %d writes in %v, %.0f/s (peak %d, baseline %d); notes %v", ios1-ios0, took.Round(time.Millisecond), rate, peak, baseline, p.Notes())
	if rate > 1.5*baseline {
		t.Errorf("after Spend: %.0f writes/s with 30,000 credits, want about the baseline %d", rate, baseline)
	}
	if n := p.Notes(); len(n) == 0 || !strings.Contains(n[0], "credits spent on request") {
		t.Errorf("notes %v, want the spending noted", n)
	}
}

// spinners are the busy storages' neighbours this process started that
// still run.
func spinners(t *testing.T) int { return children(t, "while :; do :; done") }

// children are the processes this process started whose command line
// holds cmdline and that still run.
func children(t *testing.T, cmdline string) int {
	t.Helper()
	n := 0
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		cmd, err := os.ReadFile(filepath.Join(d, "cmdline"))
		if err != nil || !strings.Contains(string(cmd), cmdline) {
			continue
		}
		st, err := os.ReadFile(filepath.Join(d, "stat"))
		// The parent's pid is the fourth field, after the command in
		// parentheses.
		if f := strings.Fields(string(st[strings.LastIndexByte(string(st), ')')+1:])); err == nil && len(f) > 1 && f[1] == strconv.Itoa(os.Getpid()) {
			n++
		}
	}
	return n
}

// A busy storage runs its neighbours, each spinning a CPU, beside the
// storage it wraps, and stops them at Close.
func TestBusy(t *testing.T) {
	s := Busy(CompetingWriter(50, 4<<10), 2)
	if s.Name != "busy-competing-writer" || Busy(Plain(), 1).Name != "busy" {
		t.Fatalf("names %q, %q", s.Name, Busy(Plain(), 1).Name)
	}
	p, err := s.Setup(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if p.Neighbours != 2 || p.Competitor == nil {
		t.Errorf("neighbours %d, competitor %v: want both storages' parts", p.Neighbours, p.Competitor)
	}
	testutil.WaitFor(t, 5*time.Second, "two spinning neighbours", func() bool { return spinners(t) == 2 })
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if n := spinners(t); n != 0 {
		t.Errorf("%d neighbours still run after Close", n)
	}
}

// busy-go-alloc runs the spinning neighbours and, beside them, a Go
// process whose collector keeps running; Close stops both and removes
// the Go neighbour's binary. The test's neighbour is smaller than
// DefaultGoAlloc's (a 32 MiB live heap) so that its cycles come quickly.
func TestBusyGoAlloc(t *testing.T) {
	var named bool
	for _, s := range Default() {
		named = named || s.Name == "busy-go-alloc"
	}
	if !named {
		t.Fatal("the zoo has no busy-go-alloc")
	}
	s := Busy(GoAlloc(Plain(), GoAllocSpec{LiveMiB: 32, AllocMiBPerSec: 128, MinKiB: 1, MaxKiB: 8, KeepEvery: 16}), 2)
	if s.Name != "busy-go-alloc" || GoAlloc(IOPSCap(500), DefaultGoAlloc).Name != "go-alloc-iops-500" {
		t.Fatalf("names %q, %q", s.Name, GoAlloc(IOPSCap(500), DefaultGoAlloc).Name)
	}
	p, err := s.Setup(context.Background(), t.TempDir())
	if errors.Is(err, ErrUnavailable) {
		t.Skipf("skipping: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	t.Cleanup(func() {
		if !closed {
			p.Close()
		}
	})
	if p.Neighbours != 2 || p.GoAlloc == nil {
		t.Fatalf("neighbours %d, Go neighbour %v: want both", p.Neighbours, p.GoAlloc)
	}
	testutil.WaitFor(t, 10*time.Second, "two spinning neighbours", func() bool { return spinners(t) == 2 })
	if n := children(t, "zoo-goalloc-"); n != 1 {
		t.Errorf("%d Go neighbours run, want 1", n)
	}
	testutil.WaitFor(t, 30*time.Second, "the Go neighbour's first figures", func() bool { return p.GoAlloc.Stats().GCCycles > 0 })
	first := p.GoAlloc.Stats()
	testutil.WaitFor(t, 60*time.Second, "three more collections", func() bool { return p.GoAlloc.Stats().GCCycles >= first.GCCycles+3 })
	last := p.GoAlloc.Stats()
	t.Logf("Go neighbour: %d collections, GC %.1f of %.1f CPU-seconds, heap %d MiB, %d MiB allocated",
		last.GCCycles, last.GCCPUSeconds, last.TotalCPUSeconds, last.HeapBytes>>20, last.AllocatedBytes>>20)
	if last.AllocatedBytes <= first.AllocatedBytes || last.GCCPUSeconds <= first.GCCPUSeconds {
		t.Errorf("figures %+v then %+v: want more allocated and more GC time", first, last)
	}
	bin := p.GoAlloc.bin
	closed = true
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if n := spinners(t); n != 0 {
		t.Errorf("%d neighbours still run after Close", n)
	}
	if n := children(t, "zoo-goalloc-"); n != 0 {
		t.Errorf("%d Go neighbours still run after Close", n)
	}
	if _, err := os.Stat(bin); !os.IsNotExist(err) {
		t.Errorf("the Go neighbour's binary %s is still there after Close: %v", bin, err)
	}
}

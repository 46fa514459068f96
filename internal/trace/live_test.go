package trace

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"etcdbench/internal/etcdcluster"
	"etcdbench/internal/etcdload"
	"etcdbench/internal/etcdload/metrics"
	"etcdbench/internal/testutil"
	"etcdbench/internal/verdict"
)

// skipUnlessTraceable skips a test on machines where the tracer cannot
// load, saying why.
func skipUnlessTraceable(t *testing.T, err error) {
	t.Helper()
	if errors.Is(err, ErrPermission) || errors.Is(err, ErrUnsupported) {
		t.Skipf("the BPF tracer cannot run here: %v", err)
	}
}

// bpfFDs lists this process's open file descriptors that hold BPF
// objects (programs, maps, links, BTF). Only this process's descriptors
// count: other test binaries (the cmd tests trace too) load programs of
// their own at the same time, and the kernel frees a closed program
// later, so the kernel-wide program list says nothing about this tracer.
func bpfFDs(t *testing.T) map[string]bool {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	fds := map[string]bool{}
	for _, e := range ents {
		target, err := os.Readlink("/proc/self/fd/" + e.Name())
		if err == nil && strings.HasPrefix(target, "anon_inode:") && strings.Contains(target, "bpf") {
			fds[e.Name()+" "+target] = true
		}
	}
	return fds
}

// traceThis starts tracing this process and returns once the tracer's
// programs are loaded and attached, with this process's BPF descriptors
// from before; end stops the trace and returns its outcome. Where the
// tracer cannot run the test is skipped.
func traceThis(ctx context.Context, t *testing.T) (before map[string]bool, end func() (*Trace, error)) {
	t.Helper()
	before = bpfFDs(t)
	tctx, stop := context.WithCancel(ctx)
	type outcome struct {
		tr  *Trace
		err error
	}
	done := make(chan outcome, 1)
	attached := make(chan struct{})
	go func() {
		tr, err := Run(tctx, Options{PID: os.Getpid(), Duration: time.Minute, Attached: func() { close(attached) }})
		done <- outcome{tr, err}
	}()
	end = func() (*Trace, error) {
		stop()
		o := <-done
		skipUnlessTraceable(t, o.err)
		if o.err != nil && !errors.Is(o.err, context.Canceled) {
			t.Fatalf("Run: %v", o.err)
		}
		return o.tr, o.err
	}
	select {
	case <-attached:
	case o := <-done: // ended before attaching
		skipUnlessTraceable(t, o.err)
		t.Fatalf("the trace ended before attaching its programs: %v", o.err)
	case <-time.After(20 * time.Second):
		stop()
		t.Fatalf("the tracer not attached 20 s into the trace (Run: %v)", (<-done).err)
	}
	// The tracer's programs show as descriptors of this process once
	// loaded; the leak check of TestTraceEmbeddedEtcd relies on seeing
	// them here.
	if len(bpfFDs(t)) <= len(before) {
		stop()
		t.Fatalf("the tracer attached, but no new BPF descriptor in this process (Run: %v)", (<-done).err)
	}
	return before, end
}

// TestTraceEmbeddedEtcd traces this test process while its embedded etcd
// takes puts, and compares what the tracer saw with etcd's own WAL fsync
// histogram over the same window.
func TestTraceEmbeddedEtcd(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := etcdcluster.Start(ctx, etcdcluster.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatalf("starting etcd: %v", err)
	}
	defer c.Close()
	before, end := traceThis(ctx, t) // etcd is idle meanwhile
	murl := c.MetricsURLs()[0]
	mb, err := metrics.Scrape(ctx, nil, murl)
	if err != nil {
		t.Fatal(err)
	}
	l := etcdload.DefaultLoad(etcdload.OpPut)
	l.Client.Endpoints, l.Total, l.Clients, l.ValSize, l.KeySpaceSize = c.Endpoints(), 3000, 4, 256, 1000
	if _, err := etcdload.Run(ctx, l); err != nil {
		end()
		t.Fatalf("load: %v", err)
	}
	// The load's last writes are answered; etcd may still sync what
	// follows them (the last commit): wait until its WAL fsync count
	// holds still between two scrapes.
	var ma metrics.Families
	walFsyncs := func(f metrics.Families) float64 {
		h, _ := metrics.HistogramOf(f, etcdload.WALFsyncMetric)
		return h.Count
	}
	testutil.WaitFor(t, 10*time.Second, "etcd's WAL fsync count to hold still after the load", func() bool {
		prev := ma
		if ma, err = metrics.Scrape(ctx, nil, murl); err != nil {
			t.Fatal(err)
		}
		return prev != nil && walFsyncs(prev) == walFsyncs(ma)
	})
	tr, _ := end()
	hb, _ := metrics.HistogramOf(mb, etcdload.WALFsyncMetric)
	ha, _ := metrics.HistogramOf(ma, etcdload.WALFsyncMetric)
	d, err := metrics.Delta(hb, ha)
	if err != nil || d.Count == 0 {
		t.Fatalf("etcd's WAL fsync histogram delta %+v, %v", d, err)
	}
	wal := tr.col.classes[ClassWAL]
	// The delete of the run's prefix after the load syncs the WAL too;
	// both windows contain it.
	if got, want := float64(wal.fdatasyncs), d.Count; math.Abs(got-want) > 0.03*want+2 {
		t.Errorf("traced %g WAL fdatasyncs, etcd counted %g", got, want)
	}
	traced := wal.syncLat.Mean()
	metric := d.Sum / d.Count * 1e9
	t.Logf("WAL fdatasyncs: traced %d, etcd %g; mean traced %v, etcd %v; bytes per sync p50 %d; write sizes min %d p50 %d p90 %d max %d",
		wal.fdatasyncs, d.Count, time.Duration(traced), time.Duration(metric), wal.bytesPerSync.Quantile(0.5),
		wal.writeSize.Quantile(0), wal.writeSize.Quantile(0.5), wal.writeSize.Quantile(0.9), wal.writeSize.Max())
	if math.Abs(traced-metric) > 0.2*metric {
		t.Errorf("traced mean WAL sync %v, etcd's sum/count %v: more than 20 %% apart", time.Duration(traced), time.Duration(metric))
	}
	if bs, ok := RecommendedBS(wal); !ok || bs < 256 || bs > 64<<10 {
		t.Errorf("bytes per WAL sync %d (%v): want about one 256-byte put's frames and a hard state", bs, ok)
	}
	// etcd's WAL encoder buffers a batch's frames (8-byte length word,
	// record, padding) and writes them with one write() before its
	// fdatasync. A put's entry frame holds its 256-byte value, its key
	// (under 100 bytes here) and under 100 bytes of raft and request
	// headers; a batch holds at most one entry per client (4) and a hard
	// state. So: one write per sync, and writes of 264 bytes (a value and
	// a length word) to 4 x 456 + 100 bytes - all but the last few: the
	// run ends with the deletion of its prefix, a smaller entry.
	const minFrame, maxBatch = 256 + 8, 4*(256+8+100+100) + 100
	if p10, p90 := wal.writeSize.Quantile(0.1), wal.writeSize.Quantile(0.9); p10 < minFrame || p90 > maxBatch {
		t.Errorf("WAL write sizes p10 %d, p90 %d bytes: want %d..%d for 256-byte puts by 4 clients", p10, p90, minFrame, maxBatch)
	}
	if n := wal.writesPerSync.Quantile(0.5); n != 1 {
		t.Errorf("median writes per WAL sync %d, want 1 (etcd writes its batch at once before the sync)", n)
	}
	w, err := tr.Workload(verdict.Defaults())
	if err != nil {
		t.Fatal(err)
	}
	if w.Latencies[0].Name != "wal sync" || w.Figure("recommended_bs") == nil || len(w.Verdicts) != 1 {
		t.Errorf("workload latencies %v, figures %v, verdicts %v", w.Latencies, w.Figures, w.Verdicts)
	}
	if tr.col.classes[ClassDB].fdatasyncs == 0 {
		t.Errorf("no bbolt fdatasyncs traced during 3000 puts")
	}
	for fd := range bpfFDs(t) {
		if !before[fd] {
			t.Errorf("BPF object still held after the trace: fd %s", fd)
		}
	}
}

// TestTraceEndsWithProcess traces a short-lived process: the trace ends
// when it exits, not at its duration - whether its parent reaps it at
// once (it leaves /proc) or not (a zombie) - and releases every BPF
// object it held.
func TestTraceEndsWithProcess(t *testing.T) {
	for _, reaped := range []bool{true, false} {
		t.Run(fmt.Sprintf("reaped=%v", reaped), func(t *testing.T) {
			before := bpfFDs(t)
			cmd := exec.Command("sleep", "0.5")
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			if reaped {
				go cmd.Wait()
			} else {
				defer cmd.Wait()
			}
			start := time.Now()
			tr, err := Run(context.Background(), Options{PID: cmd.Process.Pid, Duration: time.Minute})
			skipUnlessTraceable(t, err)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if !tr.Exited || time.Since(start) > 30*time.Second {
				t.Errorf("exited %v after %v: want the trace to end with the process", tr.Exited, time.Since(start))
			}
			for fd := range bpfFDs(t) {
				if !before[fd] {
					t.Errorf("BPF object still held after the trace: fd %s", fd)
				}
			}
		})
	}
}

func TestTraceNoProcess(t *testing.T) {
	if _, err := Run(context.Background(), Options{PID: 1 << 30}); !errors.Is(err, ErrNoProcess) {
		t.Errorf("Run: %v, want ErrNoProcess", err)
	}
}

// TestTraceCPUWait traces this process's own write + fdatasync loop on a
// file named like a WAL segment while busy threads keep every CPU
// occupied: the syncs' wait for a CPU after the disk answered must show
// up in "wal sync cpu wait", and the two parts must add up to each sync.
func TestTraceCPUWait(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "0000000000000000-0000000000000000.wal"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	_, end := traceThis(context.Background(), t)

	// Twice as many busy threads as CPUs, beside the syncing one.
	hogs := 2 * runtime.NumCPU()
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(hogs + 2))
	var quit atomic.Bool
	var wg sync.WaitGroup
	for range hogs {
		wg.Go(func() {
			runtime.LockOSThread()
			x := uint64(1)
			for !quit.Load() {
				for range 1000 {
					x = x*6364136223846793005 + 1442695040888963407
				}
			}
			_ = x
		})
	}
	const syncs = 300
	buf := make([]byte, 512)
	for range syncs {
		if _, err := f.Write(buf); err != nil {
			t.Fatal(err)
		}
		if err := unix.Fdatasync(int(f.Fd())); err != nil {
			t.Fatal(err)
		}
	}
	quit.Store(true)
	wg.Wait()
	tr, _ := end()
	wal := tr.col.classes[ClassWAL]
	if wal.fdatasyncs < syncs {
		t.Fatalf("traced %d WAL fdatasyncs, made %d", wal.fdatasyncs, syncs)
	}
	if got, want := wal.waitNs+wal.ownNs, int64(wal.syncLat.Mean()*float64(wal.syncLat.TotalCount())); math.Abs(float64(got-want)) > 0.01*float64(want) {
		t.Errorf("wait + own time %v, all syncs %v: the parts do not add up", time.Duration(got), time.Duration(want))
	}
	t.Logf("%d syncs: p99 %v, cpu wait p99 %v (share %.2f), without it %v", wal.syncs(),
		time.Duration(wal.syncLat.ValueAtPercentile(99)), time.Duration(wal.syncWait.ValueAtPercentile(99)),
		float64(wal.waitNs)/float64(wal.waitNs+wal.ownNs), time.Duration(wal.syncOwn.ValueAtPercentile(99)))
	// Either sign shows the wait: a p99 of 100 µs, or a tenth of the
	// syncs' time (the scheduler's wake-up preemption can keep each wait
	// short while the waits add up).
	share := float64(wal.waitNs) / float64(wal.waitNs+wal.ownNs)
	if w := wal.syncWait.ValueAtPercentile(99); w < int64(100*time.Microsecond) && share < 0.1 {
		t.Errorf("cpu wait p99 %v, %.2f of the syncs' time, with %d busy threads on %d CPUs: the scheduler's part of the syncs is not seen", time.Duration(w), share, hogs, runtime.NumCPU())
	}
	w, err := tr.Workload(verdict.Defaults())
	if err != nil {
		t.Fatal(err)
	}
	if len(w.Latencies) < 3 || w.Latencies[1].Name != "wal sync cpu wait" || w.Latencies[2].Name != "wal sync without cpu wait" || w.Figure("wal_sync_cpu_wait_share") == nil {
		t.Errorf("workload latencies %v, figures %v", w.Latencies, w.Figures)
	}
	// The typed syncs are the workload's, unnamed.
	s, ok, err := tr.WALSyncs()
	if err != nil || !ok || s.All.Name != "" {
		t.Fatalf("WALSyncs: %+v %v %v", s, ok, err)
	}
	all, own := s.All, s.WithoutCPUWait
	all.Name, own.Name = "wal sync", "wal sync without cpu wait"
	if !reflect.DeepEqual(all, w.Latencies[0]) || !reflect.DeepEqual(own, w.Latencies[2]) || s.Count() != wal.syncs() {
		t.Errorf("typed syncs %+v / %+v differ from the workload's %+v / %+v", all, own, w.Latencies[0], w.Latencies[2])
	}
}

// TestTraceFilesOpenedDuringTrace: files this process opens after the
// trace began are classified in the kernel at their openat and traced
// from their first write - a snapshot written, synced and closed within
// a millisecond, a WAL segment prepared as N.tmp, a log-like file - and
// /dev/null is not traced.
func TestTraceFilesOpenedDuringTrace(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "member", "snap"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, end := traceThis(context.Background(), t)
	writeSync := func(path string, sizes ...int) {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range sizes {
			if _, err := f.Write(make([]byte, n)); err != nil {
				t.Fatal(err)
			}
		}
		if err := f.Sync(); err != nil { // fsync
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
	snap := filepath.Join(dir, "member", "snap", "0000000000000002-0000000000002711.snap")
	tmp := filepath.Join(dir, "0.tmp")
	other := filepath.Join(dir, "etcd.log")
	writeSync(snap, 4096, 100)
	writeSync(tmp, 512)
	writeSync(other, 7, 7, 7)
	if err := os.WriteFile(os.DevNull, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	tr, _ := end()
	for _, c := range []struct {
		class         Class
		path          string
		writes, bytes int64
	}{{ClassSnap, snap, 2, 4196}, {ClassWAL, tmp, 1, 512}, {ClassOther, other, 3, 21}} {
		s := tr.col.classes[c.class]
		// Only this test's files are written meanwhile; Go's test runner
		// writes its output through a pipe (not a file).
		if s.writes != c.writes || s.writeBytes != c.bytes || s.fsyncs != 1 {
			t.Errorf("%s: %d writes, %d bytes, %d fsyncs; want %d, %d, 1", c.class, s.writes, s.writeBytes, s.fsyncs, c.writes, c.bytes)
		}
		if tr.Files[c.path] != c.class {
			t.Errorf("%s not among the traced files as %s: %v", c.path, c.class, tr.Files)
		}
	}
	if got := tr.col.classes[ClassSnap].writeSize.Quantile(0.99); got != 4096 {
		t.Errorf("snapshot write size p99 %d, want exactly 4096", got)
	}
	if _, ok := tr.Files[os.DevNull]; ok {
		t.Errorf("/dev/null traced: %v", tr.Files)
	}
	w, err := tr.Workload(verdict.Defaults())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, l := range w.Latencies {
		names = append(names, l.Name)
		if l.Name == "snap sync" && len(l.Series) == 0 {
			t.Errorf("snap sync has no per-second series")
		}
	}
	if !slices.Contains(names, "snap sync") || !slices.Contains(names, "other sync") || w.Figure("snap_write_size_max") == nil {
		t.Errorf("latencies %v, figures %v", names, w.Figures)
	}
}

// TestFollowWindows follows this process across windows: each window
// counts the WAL syncs that ended in it, none of those between windows,
// and the tracer's descriptors are gone after Close.
func TestFollowWindows(t *testing.T) {
	dir := t.TempDir()
	wal := filepath.Join(dir, "member", "wal")
	if err := os.MkdirAll(wal, 0o755); err != nil {
		t.Fatal(err)
	}
	before := bpfFDs(t)
	f := Follow(context.Background(), os.Getpid())
	if why := f.Why(); why != "" {
		f.Close()
		skipUnlessTraceable(t, f.Err())
		t.Fatalf("Follow: %s", why)
	}
	w, err := os.OpenFile(filepath.Join(wal, "0000000000000000-0000000000000000.wal"), os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	syncs := func(n int) {
		for range n {
			if _, err := w.Write(make([]byte, 512)); err != nil {
				t.Fatal(err)
			}
			if err := unix.Fdatasync(int(w.Fd())); err != nil {
				t.Fatal(err)
			}
		}
	}
	for i, n := range []int{5, 7} {
		stop := f.Window()
		syncs(n)
		got, why := stop()
		if got == nil {
			t.Fatalf("window %d: no syncs (%s)", i+1, why)
		}
		if got.Count() != int64(n) || got.WithoutCPUWait.Count != int64(n) {
			t.Errorf("window %d: %d syncs (%d without CPU waits), want %d", i+1, got.Count(), got.WithoutCPUWait.Count, n)
		}
		if p, ok := got.P99(); !ok || p <= 0 {
			t.Errorf("window %d: p99 %v", i+1, p)
		}
		syncs(3) // between windows: nobody's
	}
	stop := f.Window()
	if got, why := stop(); got != nil || why == "" {
		t.Errorf("an empty window: %v, %q; want nil and why", got, why)
	}
	f.Close()
	if after := bpfFDs(t); len(after) > len(before) {
		t.Errorf("BPF descriptors left after Close: %d before, %d after", len(before), len(after))
	}
}

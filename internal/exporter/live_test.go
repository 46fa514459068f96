package exporter

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"etcdbench/internal/testutil"
	"etcdbench/internal/testutil/hostetcd"
	"etcdbench/internal/trace"
	"etcdbench/internal/verdict"
)

// bpfFDs lists this process's descriptors that hold BPF objects
// (programs, maps, links): only this process's, as other test binaries
// load programs of their own meanwhile.
func bpfFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range ents {
		target, err := os.Readlink("/proc/self/fd/" + e.Name())
		if err == nil && strings.HasPrefix(target, "anon_inode:") && strings.Contains(target, "bpf") {
			n++
		}
	}
	return n
}

// serve runs an exporter for etcd processes with data dir dataDir on a
// free 127.0.0.1 port; stop ends it and returns Run's error once every
// tracer is detached.
func serve(t *testing.T, dataDir string) (addr string, ex *Exporter, stop func() error) {
	t.Helper()
	return serveStoppable(t, Config{Filter: Filter{DataDirs: []string{dataDir}}, Interval: 500 * time.Millisecond, Logf: t.Logf})
}

// serveWith runs an exporter with cfg on a free 127.0.0.1 port until t
// ends.
func serveWith(t *testing.T, cfg Config) (addr string, ex *Exporter) {
	t.Helper()
	addr, ex, _ = serveStoppable(t, cfg)
	return addr, ex
}

// serveStoppable runs an exporter with cfg on a free 127.0.0.1 port.
func serveStoppable(t *testing.T, cfg Config) (addr string, ex *Exporter, stop func() error) {
	t.Helper()
	if err := trace.Probe(); errors.Is(err, trace.ErrPermission) || errors.Is(err, trace.ErrUnsupported) {
		t.Skipf("the BPF tracer cannot run here: %v", err)
	}
	ex = New(cfg)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: ex.Handler()}
	go func() { _ = srv.Serve(ln) }()
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- ex.Run(ctx) }()
	stopped := false
	stop = func() error {
		if stopped {
			return nil
		}
		stopped = true
		cancel()
		err := <-ran
		_ = srv.Close()
		return err
	}
	t.Cleanup(func() { _ = stop() })
	return ln.Addr().String(), ex, stop
}

// bucketBounds are the classic bucket around v: the largest upper bound
// below it and the smallest at or above it.
func bucketBounds(v float64) (lo, hi float64) {
	lo, hi = 0, math.Inf(1)
	for _, b := range latencyBuckets {
		if b < v {
			lo = b
		} else {
			hi = b
			break
		}
	}
	return lo, hi
}

// TestExporterWithPrometheus runs the whole chain with real parts: an
// etcd process under the exporter, scraped by Prometheus every second.
// PromQL's histogram_quantile over the exporter's buckets for a window of
// puts lies in the bucket of the p99 that a tracer of its own (the
// statistics mode of 'etcdbench trace') measured in that window, and the
// counts agree. Then etcd restarts under the exporter: the member's
// target comes back (attached twice), its counters continue without a
// reset, and the WAL syncs counted after the restart are etcd's own
// count, not twice it. Stopping the exporter leaves no BPF object in
// this process.
func TestExporterWithPrometheus(t *testing.T) {
	e := startEtcd(t, "m0")
	before := bpfFDs(t)
	addr, ex, stop := serve(t, e.DataDir)
	p := startPrometheus(t, addr)
	sel := fmt.Sprintf(`{data_dir=%q,member="m0",file="wal"}`, e.DataDir)
	up := fmt.Sprintf(`etcdbench_target_up{data_dir=%q}`, e.DataDir)
	p.waitFor(t, "the member traced", up, func(v float64) bool { return v == 1 }, 30*time.Second)
	// Its memory against its limit (its cgroup's or the machine's).
	p.waitFor(t, "the member's memory share of its limit", fmt.Sprintf(`etcdbench_memory_resident_bytes{data_dir=%q} / ignoring (source) group_left etcdbench_memory_limit_bytes{data_dir=%q}`, e.DataDir, e.DataDir),
		func(v float64) bool { return v > 0 && v < 1 }, 30*time.Second)

	tA, tB, tracerP99, tracerCount := loadWindow(t, p, e)
	at := fmt.Sprintf("@ %.3f", float64(tA.UnixNano())/1e9)
	promP99 := p.query(t, fmt.Sprintf(`histogram_quantile(0.99, sum by (le) (etcdbench_sync_duration_seconds_bucket%s - etcdbench_sync_duration_seconds_bucket%s %s))`, sel, sel, at), tB)
	promCount := p.query(t, fmt.Sprintf(`sum(etcdbench_syncs_total%s) - sum(etcdbench_syncs_total%s %s)`, sel, sel, at), tB)
	if len(promP99) != 1 || len(promCount) != 1 {
		t.Fatalf("PromQL gave p99 %v and count %v for the window", promP99, promCount)
	}
	lo, hi := bucketBounds(tracerP99)
	t.Logf("WAL sync p99 over the window: PromQL histogram_quantile %.1fµs, the tracer's %.1fµs (its bucket %g..%gµs); syncs: Prometheus %.0f, tracer %d",
		promP99[0]*1e6, tracerP99*1e6, lo*1e6, hi*1e6, promCount[0], tracerCount)
	// The two ranks differ by rounding (PromQL interpolates at 0.99 x
	// count): when the p99 sample closes its bucket, PromQL's value
	// starts the next one, a fraction of a percent past the edge.
	if promP99[0] < lo*0.99 || promP99[0] > hi*1.01 {
		t.Errorf("PromQL p99 %gs is outside the bucket %g..%gs of the tracer's p99 %gs", promP99[0], lo, hi, tracerP99)
	}
	if d := math.Abs(promCount[0] - float64(tracerCount)); d > 0.01*float64(tracerCount)+5 {
		t.Errorf("Prometheus counted %.0f WAL syncs in the window, the tracer %d", promCount[0], tracerCount)
	}

	// Restart etcd under the exporter.
	pid1 := e.PID()
	e.Stop()
	p.waitFor(t, "the stopped member down", up, func(v float64) bool { return v == 0 }, 20*time.Second)
	if st := ex.Status(); len(st.Active) != 0 || len(st.Gone) != 1 || st.Gone[0].PID != pid1 {
		t.Errorf("status after etcd stopped: %+v", st)
	}
	e.Restart(t)
	p.waitFor(t, "the restarted member traced", up, func(v float64) bool { return v == 1 }, 30*time.Second)
	attaches := p.waitFor(t, "two attaches", fmt.Sprintf(`etcdbench_target_attaches_total{data_dir=%q}`, e.DataDir), func(v float64) bool { return v >= 2 }, 10*time.Second)
	if attaches != 2 {
		t.Errorf("attached %g times, want 2 (once per etcd process)", attaches)
	}
	p.waitScrapes(t, 1) // of the restarted member, idle: the baseline at tC
	tC := time.Now()
	etcdBefore := e.WALFsyncs(t)
	e.Put(t, 1000, 4)
	etcdAfter := e.WALFsyncs(t)
	etcdDelta := etcdAfter - etcdBefore
	// Prometheus has the exporter's count of the puts' syncs once it has
	// scraped it after the exporter read them: wait (a while) for the
	// count to reach etcd's; the check below says how far off it is
	// when it never does.
	var after []float64
	testutil.Poll(30*time.Second, func() bool {
		after = p.query(t, fmt.Sprintf(`sum(etcdbench_syncs_total%s) - sum(etcdbench_syncs_total%s @ %.3f)`, sel, sel, float64(tC.UnixNano())/1e9), time.Now())
		return len(after) == 1 && after[0] >= etcdDelta
	})
	resets := p.query(t, fmt.Sprintf(`sum(resets(etcdbench_syncs_total%s[5m]))`, sel), time.Now())
	t.Logf("after the restart, 1000 puts: the exporter counted %v WAL syncs, etcd's own metric %.0f; counter resets %v", after, etcdDelta, resets)
	if len(after) != 1 || math.Abs(after[0]-etcdDelta) > 0.05*etcdDelta+5 {
		t.Errorf("the exporter counted %v WAL syncs after the restart, etcd itself %.0f", after, etcdDelta)
	}
	if len(resets) != 1 || resets[0] != 0 {
		t.Errorf("the WAL sync counter was reset %v times: a restart must continue it", resets)
	}

	snaps := p.query(t, fmt.Sprintf(`sum(etcdbench_syncs_total{data_dir=%q,file="snap"})`, e.DataDir), time.Now())
	t.Logf("snapshot syncs counted: %v", snaps)
	if len(snaps) != 1 || snaps[0] < 1 {
		t.Errorf("snapshot syncs %v: etcd made snapshots (--snapshot-count 1000, 5,000 puts), none counted", snaps)
	}

	if err := stop(); !errors.Is(err, context.Canceled) {
		t.Errorf("Run after cancel: %v, want context.Canceled", err)
	}
	if n := bpfFDs(t); n != before {
		t.Errorf("%d BPF descriptors in this process after the exporter stopped, %d before it started", n, before)
	}
}

// loadWindow puts 4,000 keys into e while a tracer of the test's own (the
// statistics mode of 'etcdbench trace') watches it, between scrapes of
// the idle etcd (one before tA, one after) and two after the load (before
// tB), as p (Prometheus) shows them; it
// returns the window and the tracer's WAL sync p99 (seconds) and count.
func loadWindow(t *testing.T, p *promServer, e *hostetcd.Etcd) (tA, tB time.Time, p99 float64, count int64) {
	t.Helper()
	p.waitScrapes(t, 1) // of the idle etcd
	tA = time.Now()
	tctx, tcancel := context.WithCancel(context.Background())
	type outcome struct {
		tr  *trace.Trace
		err error
	}
	traced := make(chan outcome, 1)
	attached := make(chan struct{})
	go func() {
		tr, err := trace.Run(tctx, trace.Options{PID: e.PID(), Duration: 5 * time.Minute, Attached: func() { close(attached) }})
		traced <- outcome{tr, err}
	}()
	select {
	case <-attached:
	case o := <-traced:
		t.Fatalf("the test's own trace ended before attaching: %v", o.err)
	case <-time.After(30 * time.Second):
		t.Fatal("the test's own trace not attached in 30 s")
	}
	// A scrape of the idle etcd inside the window too: increase() over
	// [tA, tB] starts from the first sample in it.
	p.waitScrapes(t, 1)
	e.Put(t, 4000, 8)
	tcancel() // the trace reads what its ring buffer holds before it ends
	o := <-traced
	if o.err != nil && !errors.Is(o.err, context.Canceled) {
		t.Fatalf("the test's own trace: %v", o.err)
	}
	p.waitScrapes(t, 2) // the exporter's count of the load's syncs
	tB = time.Now()
	w, err := o.tr.Workload(verdict.Defaults())
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range w.Latencies {
		if l.Name == "wal sync" {
			count = l.Count
			for _, pc := range l.Percentiles {
				if pc.P == 99 {
					p99 = float64(pc.ValueNs) / 1e9
				}
			}
		}
	}
	if count < 500 || p99 <= 0 {
		t.Fatalf("the test's tracer saw %d WAL syncs, p99 %gs: too few to compare", count, p99)
	}
	return tA, tB, p99, count
}

// TestExporterNativeHistograms: a Prometheus with native histograms on
// (it scrapes the protobuf format) reads the exporter's native histogram,
// and its p99 over a window of puts is within two native buckets (growth
// factor 2^(1/8), the schema of NativeHistogramBucketFactor 1.1) of the
// tracer's own p99. Two, not one: Prometheus 2.42 cannot subtract native
// histograms, so the window is increase()'s, extrapolated and up to a
// scrape wider than the tracer's, whose 99th percentile sample can lie
// in the next bucket.
func TestExporterNativeHistograms(t *testing.T) {
	e := startEtcd(t, "n0")
	addr, _, _ := serve(t, e.DataDir)
	p := startPrometheus(t, addr, "--enable-feature=native-histograms")
	p.waitFor(t, "the member traced", fmt.Sprintf(`etcdbench_target_up{data_dir=%q}`, e.DataDir), func(v float64) bool { return v == 1 }, 30*time.Second)
	tA, tB, tracerP99, tracerCount := loadWindow(t, p, e)
	sel := fmt.Sprintf(`etcdbench_sync_duration_seconds{data_dir=%q,file="wal"}`, e.DataDir)
	rng := fmt.Sprintf("[%dms]", tB.Sub(tA).Milliseconds())
	count := p.query(t, fmt.Sprintf(`histogram_count(sum(increase(%s%s)))`, sel, rng), tB)
	nativeP99 := p.query(t, fmt.Sprintf(`histogram_quantile(0.99, sum(increase(%s%s)))`, sel, rng), tB)
	if len(nativeP99) != 1 || len(count) != 1 {
		t.Fatalf("no native histogram in Prometheus: p99 %v, count %v", nativeP99, count)
	}
	factor := math.Pow(2, 1.0/8)
	t.Logf("WAL sync p99 over the window: PromQL over the native histogram %.1fµs (about %.0f syncs), the tracer's %.1fµs (%d syncs); one native bucket is a factor %.4f",
		nativeP99[0]*1e6, count[0], tracerP99*1e6, tracerCount, factor)
	if r := nativeP99[0] / tracerP99; r < 1/(factor*factor) || r > factor*factor {
		t.Errorf("native p99 %gs is %.3f times the tracer's %gs: more than two native buckets apart", nativeP99[0], r, tracerP99)
	}
}

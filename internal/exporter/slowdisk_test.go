package exporter

import (
	"context"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	pmetrics "etcdbench/internal/etcdload/metrics"
	"etcdbench/internal/testutil"
	"etcdbench/internal/testutil/fusedelay"
)

// TestExporterAgreesWithEtcdOnSlowDisk puts a real etcd's data dir on a
// FUSE filesystem whose every sync takes 20 ms, where etcd's own
// histogram (buckets doubling from 1 ms) can resolve the WAL's syncs, and
// compares the WAL fsyncs etcd's /metrics report over a load with the
// exporter's: the same count, none faster than the delay in either, and
// p99s that agree within the buckets' error - the bucket that holds each
// one's 99th percentile overlaps the other's (interpolating inside a
// bucket, as histogram_quantile does, places both near their bucket's top
// when every sync is just over 20 ms, which is each histogram's
// resolution, not a disagreement).
func TestExporterAgreesWithEtcdOnSlowDisk(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping an end-to-end test")
	}
	const delay = 20 * time.Millisecond
	m := fusedelay.Mount(t, t.TempDir(), delay)
	e := startEtcdIn(t, "slow", filepath.Join(m.Dir, "data"))
	addr, _, stop := serve(t, e.DataDir)
	defer stop()
	client := &http.Client{Timeout: 10 * time.Second}
	scrape := func(url string) pmetrics.Families {
		t.Helper()
		f, err := pmetrics.Scrape(context.Background(), client, url)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	// etcdbench_targets counts a member once its tracer is attached:
	// every sync from then on is seen.
	testutil.WaitFor(t, 30*time.Second, "the exporter tracing etcd", func() bool {
		v, err := pmetrics.ValueOf(scrape("http://"+addr+"/metrics"), "etcdbench_targets")
		return err == nil && v == 1
	})
	etcdBefore, expBefore := scrape(e.Endpoint+"/metrics"), scrape("http://"+addr+"/metrics")
	e.Put(t, 400, 4)
	etcdAfter := scrape(e.Endpoint + "/metrics")
	own, ok := pmetrics.HistogramDelta(etcdBefore, etcdAfter, "etcd_disk_wal_fsync_duration_seconds")
	if !ok {
		t.Fatal("etcd's /metrics has no WAL fsync histogram")
	}
	// The exporter counts a sync when it reads it from the ring buffer:
	// wait (a while) until it has read as many as etcd made; the checks
	// below say how far off it is when it never does.
	var exp pmetrics.Histogram
	var byFile map[string]pmetrics.Histogram
	testutil.Poll(10*time.Second, func() bool {
		var err error
		if byFile, err = pmetrics.HistogramDeltaBy(expBefore, scrape("http://"+addr+"/metrics"), "etcdbench_sync_duration_seconds", "file"); err != nil {
			t.Fatal(err)
		}
		exp, ok = byFile["wal"]
		return ok && exp.Count >= own.Count
	})
	if !ok {
		t.Fatalf("the exporter has no WAL sync histogram: %v", byFile)
	}
	ownP99, expP99 := pmetrics.Quantile(0.99, own), pmetrics.Quantile(0.99, exp)
	t.Logf("WAL fsyncs over %d puts on %v syncs: etcd counted %.0f, p99 %.2fms (its histogram); the exporter %.0f, p99 %.2fms",
		400, delay, own.Count, ownP99*1e3, exp.Count, expP99*1e3)
	if own.Count < 50 || exp.Count < 50 {
		t.Fatalf("too few syncs to compare: etcd %.0f, exporter %.0f", own.Count, exp.Count)
	}
	if d := exp.Count - own.Count; d < -0.02*own.Count-2 || d > 0.02*own.Count+2 {
		t.Errorf("the exporter counted %.0f WAL syncs, etcd %.0f", exp.Count, own.Count)
	}
	ownLo, ownHi := quantileBucket(0.99, own)
	expLo, expHi := quantileBucket(0.99, exp)
	t.Logf("p99 buckets: etcd's %g..%gms, the exporter's %g..%gms", ownLo*1e3, ownHi*1e3, expLo*1e3, expHi*1e3)
	if ownHi < expLo || expHi < ownLo {
		t.Errorf("the p99 buckets do not overlap: etcd's %g..%gs, the exporter's %g..%gs", ownLo, ownHi, expLo, expHi)
	}
	// No sync is faster than the delay, as each histogram sees it.
	for name, h := range map[string]pmetrics.Histogram{"etcd's": own, "the exporter's": exp} {
		if below := countAtMost(h, delay.Seconds()*0.8); below > 0 {
			t.Errorf("%s histogram has %.0f WAL syncs under %v: the FUSE delay makes each take at least %v", name, below, delay*8/10, delay)
		}
	}
}

// quantileBucket is the bucket of h that holds its q quantile.
func quantileBucket(q float64, h pmetrics.Histogram) (lo, hi float64) {
	rank := q * h.Count
	for _, b := range h.Buckets {
		if b.Count >= rank {
			return lo, b.UpperBound
		}
		lo = b.UpperBound
	}
	return lo, lo
}

// countAtMost is how many observations of h fall in buckets whose upper
// bound is at most v.
func countAtMost(h pmetrics.Histogram, v float64) float64 {
	n := 0.0
	for _, b := range h.Buckets {
		if b.UpperBound <= v {
			n = b.Count
		}
	}
	return n
}

package exporter

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"etcdbench/internal/trace"
)

// series finds the series of metric name whose labels include want, in
// what g gathers; nil when there is none.
func series(t *testing.T, g prometheus.Gatherer, name string, want map[string]string) *dto.Metric {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	next:
		for _, mt := range mf.GetMetric() {
			have := map[string]string{}
			for _, l := range mt.GetLabel() {
				have[l.GetName()] = l.GetValue()
			}
			for k, v := range want {
				if have[k] != v {
					continue next
				}
			}
			return mt
		}
	}
	return nil
}

// TestRecorder: each write and sync lands in its member's and file's
// series, failed calls only in the error counters, a sync's CPU wait is
// taken out of the without-wait histogram, lost events are added as the
// total grows (not again), and the latency histograms have classic
// buckets from 10 µs and a native part.
func TestRecorder(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := newMetrics(reg)
	attached := 0
	r := m.newRecorder("m0", "/d", func() { attached++ })
	r.Attached()
	for _, o := range []trace.Observed{
		{Class: trace.ClassWAL, Bytes: 300, Writes: 1},
		{Class: trace.ClassWAL, Bytes: 200, Writes: 1},
		{Class: trace.ClassWAL, Sync: true, Latency: 2 * time.Millisecond, CPUWait: 500 * time.Microsecond, Bytes: 500, Writes: 2},
		{Class: trace.ClassWAL, Sync: true, Fsync: true, Latency: time.Millisecond},
		{Class: trace.ClassWAL, Sync: true, Failed: true},
		{Class: trace.ClassDB, Failed: true},
		{Class: trace.ClassSnap, Sync: true, Latency: 30 * time.Microsecond},
		{Class: trace.Class(99), Sync: true}, // unknown: ignored
	} {
		r.Observe(o)
	}
	r.Lost(3)
	r.Lost(3)
	r.Lost(5)
	wal := map[string]string{"member": "m0", "data_dir": "/d", "file": "wal"}
	with := func(k, v string) map[string]string {
		out := map[string]string{"member": "m0", "data_dir": "/d", k: v}
		if k != "file" {
			out["file"] = "wal"
		}
		return out
	}
	counters := []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"etcdbench_syncs_total", with("call", "fdatasync"), 1},
		{"etcdbench_syncs_total", with("call", "fsync"), 1},
		{"etcdbench_syncs_total", map[string]string{"file": "snap", "call": "fdatasync"}, 1},
		{"etcdbench_syncs_total", map[string]string{"file": "db", "call": "fdatasync"}, 0},
		{"etcdbench_sync_errors_total", wal, 1},
		{"etcdbench_write_errors_total", with("file", "db"), 1},
		{"etcdbench_writes_total", wal, 2},
		{"etcdbench_written_bytes_total", wal, 500},
		{"etcdbench_lost_events_total", map[string]string{"member": "m0"}, 5},
	}
	for _, c := range counters {
		s := series(t, reg, c.name, c.labels)
		if s == nil || s.GetCounter().GetValue() != c.want {
			t.Errorf("%s%v = %v, want %g", c.name, c.labels, s, c.want)
		}
	}
	hists := []struct {
		name     string
		count    uint64
		sum      float64
		firstBkt float64
	}{
		{"etcdbench_sync_duration_seconds", 2, 3e-3, 10e-6},
		{"etcdbench_sync_duration_without_cpu_wait_seconds", 2, 2.5e-3, 10e-6},
		{"etcdbench_sync_cpu_wait_seconds", 2, 0.5e-3, 1e-6},
		{"etcdbench_sync_written_bytes", 1, 500, 256},
		{"etcdbench_sync_writes", 1, 2, 1},
	}
	for _, h := range hists {
		s := series(t, reg, h.name, wal)
		if s == nil {
			t.Errorf("no %s for the WAL", h.name)
			continue
		}
		hg := s.GetHistogram()
		if hg.GetSampleCount() != h.count || hg.GetSampleSum() < h.sum*0.999 || hg.GetSampleSum() > h.sum*1.001 || hg.GetBucket()[0].GetUpperBound() != h.firstBkt {
			t.Errorf("%s: %d samples summing to %g, first bucket %g; want %d, %g, %g", h.name, hg.GetSampleCount(), hg.GetSampleSum(), hg.GetBucket()[0].GetUpperBound(), h.count, h.sum, h.firstBkt)
		}
		if len(hg.GetPositiveSpan()) == 0 {
			t.Errorf("%s has no native buckets", h.name)
		}
	}
	if attached != 1 {
		t.Errorf("attached called %d times, want 1", attached)
	}
}

// TestMetricNames: the names come from every collector, the trace's, the
// diskstats' and the process's, before any etcd is traced; a
// histogram's series count, a name it does not serve does not.
func TestMetricNames(t *testing.T) {
	n := MetricNames()
	for _, name := range []string{"etcdbench_sync_duration_seconds_bucket", "etcdbench_syncs_total", "etcdbench_disk_io_time_seconds_total", "etcdbench_target_up", "process_cpu_seconds_total"} {
		if !n.Has(name) {
			t.Errorf("%s not served", name)
		}
	}
	for _, name := range []string{"etcdbench_nonsense", "etcd_disk_wal_fsync_duration_seconds_bucket"} {
		if n.Has(name) {
			t.Errorf("%s served", name)
		}
	}
}

// TestMemoryBounded: however many calls and however spread their
// latencies, a member's series stay the same number and each native
// histogram keeps at most nativeMaxBkts buckets (client_golang widens
// them instead).
func TestMemoryBounded(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := newMetrics(reg)
	r := m.newRecorder("m0", "/d", func() {})
	count := func() (series, maxNative int) {
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, mf := range mfs {
			for _, mt := range mf.GetMetric() {
				series++
				if h := mt.GetHistogram(); h != nil {
					n := 0
					for _, sp := range h.GetPositiveSpan() {
						n += int(sp.GetLength())
					}
					maxNative = max(maxNative, n)
				}
			}
		}
		return series, maxNative
	}
	lat := time.Microsecond
	for i := range 200000 {
		lat = lat*1013/1000 + time.Duration(i%7)*time.Nanosecond // up to hours: every native bucket
		if lat > time.Hour {
			lat = time.Microsecond
		}
		r.Observe(trace.Observed{Class: trace.Classes[i%len(trace.Classes)], Sync: true, Latency: lat, CPUWait: lat / 3, Bytes: int64(i), Writes: int64(i % 50)})
		if i == 1000 {
			before, _ := count()
			defer func() {
				after, native := count()
				if after != before {
					t.Errorf("%d series after 1,000 calls, %d after 200,000", before, after)
				}
				if native > int(nativeMaxBkts) {
					t.Errorf("a native histogram holds %d buckets, more than its cap %d", native, nativeMaxBkts)
				}
				t.Logf("%d series, at most %d native buckets in a histogram", after, native)
			}()
		}
	}
}

package exporter

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"etcdbench/internal/trace"
)

// Namespace prefixes every metric the exporter serves.
const Namespace = "etcdbench"

// Labels of every per-member series: etcd's member name and data dir.
// The process id is deliberately not one: a restarted member continues
// its series (etcdbench_target_info has the pid).
var targetLabels = []string{"member", "data_dir"}

// fileLabel is the kind of file a sync or write went to: wal, db, snap,
// other (trace.Class).
const fileLabel = "file"

// Buckets of the histograms, as data. The latency buckets start at 10 µs
// (etcd's own start at 1 ms, where a good disk's whole distribution
// hides) and double up to about 5 s; each also has a native histogram of
// growth factor 1.1 (about 5 % error), bounded to nativeMaxBuckets.
var (
	latencyBuckets = prometheus.ExponentialBuckets(10e-6, 2, 20) // 10 µs .. 5.24 s
	waitBuckets    = prometheus.ExponentialBuckets(1e-6, 2, 24)  // 1 µs .. 8.4 s
	bytesBuckets   = prometheus.ExponentialBuckets(256, 2, 18)   // 256 B .. 32 MiB
	writesBuckets  = prometheus.ExponentialBuckets(1, 2, 12)     // 1 .. 2048
	nativeFactor   = 1.1
	nativeMaxBkts  = uint32(160)
	nativeResetAge = time.Hour
)

// metrics are the exporter's collectors, registered in its own registry.
type metrics struct {
	syncSeconds, ownSeconds, waitSeconds *prometheus.HistogramVec
	syncBytes, syncWrites                *prometheus.HistogramVec
	syncs                                *prometheus.CounterVec // + "call"
	syncErrors, writes, writeBytes       *prometheus.CounterVec
	writeErrors                          *prometheus.CounterVec
	lost, attaches, failures             *prometheus.CounterVec
	up                                   *prometheus.GaugeVec
	info                                 *prometheus.GaugeVec // + pid, device
	targets, waiting                     prometheus.Gauge
	discoveries                          *prometheus.CounterVec // + "result"
}

func histogram(name, help string, buckets []float64) *prometheus.HistogramVec {
	return prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: Namespace, Name: name, Help: help, Buckets: buckets,
		NativeHistogramBucketFactor: nativeFactor, NativeHistogramMaxBucketNumber: nativeMaxBkts,
		NativeHistogramMinResetDuration: nativeResetAge,
	}, append(append([]string{}, targetLabels...), fileLabel))
}

func counter(name, help string, extra ...string) *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: name, Help: help},
		append(append([]string{}, targetLabels...), extra...))
}

// newMetrics creates the collectors and registers them in reg.
func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		syncSeconds: histogram("sync_duration_seconds", "Time of each fdatasync and fsync etcd made on a file of this kind, from the syscall's entry to its exit (eBPF).", latencyBuckets),
		ownSeconds:  histogram("sync_duration_without_cpu_wait_seconds", "Each sync's time less the time its thread was runnable but had no CPU: what the disk and the kernel took.", latencyBuckets),
		waitSeconds: histogram("sync_cpu_wait_seconds", "The part of each sync its thread was runnable without a CPU (woken when the disk answered, or preempted).", waitBuckets),
		syncBytes:   histogram("sync_written_bytes", "Bytes written to the same file descriptor since its previous sync, per sync that followed writes.", bytesBuckets),
		syncWrites:  histogram("sync_writes", "write and pwrite64 calls on the same file descriptor since its previous sync, per sync that followed writes.", writesBuckets),
		syncs:       counter("syncs_total", "fdatasync and fsync calls that succeeded, by kind of file and call.", fileLabel, "call"),
		syncErrors:  counter("sync_errors_total", "fdatasync and fsync calls that returned an error.", fileLabel),
		writes:      counter("writes_total", "write and pwrite64 calls that succeeded.", fileLabel),
		writeBytes:  counter("written_bytes_total", "Bytes written by write and pwrite64.", fileLabel),
		writeErrors: counter("write_errors_total", "write and pwrite64 calls that returned an error.", fileLabel),
		lost:        counter("lost_events_total", "Calls not recorded because the tracer's ring buffer was full: every other count is low by this many."),
		attaches:    counter("target_attaches_total", "Times a tracer attached to this member's process: 1, plus one per restart seen."),
		failures:    counter("trace_failures_total", "Times tracing this member's process failed (the status page and the log say why); tried again after a growing wait."),
		up: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: Namespace, Name: "target_up",
			Help: "1 while this member's process is traced, 0 after it exited or could not be traced."}, targetLabels),
		info: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: Namespace, Name: "target_info",
			Help: "1 for each member's current process: its pid and the block device under its data dir."}, append(append([]string{}, targetLabels...), "pid", "device")),
		targets: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: Namespace, Name: "targets",
			Help: "etcd processes traced now."}),
		waiting: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: Namespace, Name: "waiting_for_etcd",
			Help: "1 while no etcd process (matching --pid and --data-dir) is found: the exporter waits and looks again."}),
		discoveries: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "discoveries_total",
			Help: "Scans of /proc for etcd processes, by result (ok, error)."}, []string{"result"}),
	}
	reg.MustRegister(m.syncSeconds, m.ownSeconds, m.waitSeconds, m.syncBytes, m.syncWrites,
		m.syncs, m.syncErrors, m.writes, m.writeBytes, m.writeErrors, m.lost, m.attaches, m.failures,
		m.up, m.info, m.targets, m.waiting, m.discoveries)
	return m
}

// classObservers are one kind of file's series of one member, resolved
// once so that the hot path does no label lookups.
type classObservers struct {
	sync, own, wait, bytes, writes prometheus.Observer
	fdatasyncs, fsyncs             prometheus.Counter
	syncErrors, writeCalls         prometheus.Counter
	writeBytes, writeErrors        prometheus.Counter
}

// recorder is the trace.Observer of one traced process: it records into
// its member's series.
type recorder struct {
	byClass [trace.ClassOther + 1]*classObservers
	// wal and db are the last minute's syncs of the WAL and the db, for
	// the status page.
	wal, db  *recentSyncs
	lost     prometheus.Counter
	lastLost int64
	attached func()
}

// newRecorder resolves the series of member m in data dir d.
func (m *metrics) newRecorder(member, dataDir string, attached func()) *recorder {
	r := &recorder{lost: m.lost.WithLabelValues(member, dataDir), attached: attached, wal: newRecentSyncs(), db: newRecentSyncs()}
	for _, c := range trace.Classes {
		l := []string{member, dataDir, c.String()}
		r.byClass[c] = &classObservers{
			sync: m.syncSeconds.WithLabelValues(l...), own: m.ownSeconds.WithLabelValues(l...),
			wait: m.waitSeconds.WithLabelValues(l...), bytes: m.syncBytes.WithLabelValues(l...),
			writes:     m.syncWrites.WithLabelValues(l...),
			fdatasyncs: m.syncs.WithLabelValues(member, dataDir, c.String(), "fdatasync"),
			fsyncs:     m.syncs.WithLabelValues(member, dataDir, c.String(), "fsync"),
			syncErrors: m.syncErrors.WithLabelValues(l...), writeCalls: m.writes.WithLabelValues(l...),
			writeBytes: m.writeBytes.WithLabelValues(l...), writeErrors: m.writeErrors.WithLabelValues(l...),
		}
	}
	return r
}

// Attached implements trace.Observer.
func (r *recorder) Attached() { r.attached() }

// Observe implements trace.Observer: one call into the histograms and
// counters of its kind of file.
func (r *recorder) Observe(o trace.Observed) {
	if int(o.Class) >= len(r.byClass) || r.byClass[o.Class] == nil {
		return
	}
	c := r.byClass[o.Class]
	switch {
	case !o.Sync && o.Failed:
		c.writeErrors.Inc()
	case !o.Sync:
		c.writeCalls.Inc()
		c.writeBytes.Add(float64(o.Bytes))
	case o.Failed:
		c.syncErrors.Inc()
	default:
		if o.Fsync {
			c.fsyncs.Inc()
		} else {
			c.fdatasyncs.Inc()
		}
		c.sync.Observe(o.Latency.Seconds())
		switch o.Class {
		case trace.ClassWAL:
			r.wal.observe(time.Now(), o.Latency)
		case trace.ClassDB:
			r.db.observe(time.Now(), o.Latency)
		}
		c.own.Observe((o.Latency - o.CPUWait).Seconds())
		c.wait.Observe(o.CPUWait.Seconds())
		if o.Writes > 0 {
			c.bytes.Observe(float64(o.Bytes))
			c.writes.Observe(float64(o.Writes))
		}
	}
}

// Lost implements trace.Observer: the ring buffer's drops since this
// process's trace began, added to the member's counter as they grow.
func (r *recorder) Lost(total int64) {
	if total > r.lastLost {
		r.lost.Add(float64(total - r.lastLost))
		r.lastLost = total
	}
}

package exporter

import (
	"context"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"etcdbench/internal/exporter/headroom"
	"etcdbench/internal/trace"
)

// DefaultInterval is how often /proc is scanned for etcd processes.
const DefaultInterval = 5 * time.Second

// Config says what the exporter traces.
type Config struct {
	// Filter narrows the etcd processes traced (--pid, --data-dir).
	Filter Filter
	// Interval is how often /proc is scanned for new or restarted etcd
	// processes (DefaultInterval when 0); a traced process's exit is
	// seen within trace.Options.ExitCheck.
	Interval time.Duration
	// Root is the root of /proc and /sys ("/" unless a test says
	// otherwise).
	Root string
	// Logf, when set, receives one line per target attached, ended or
	// failed, and per capacity file loaded or refused.
	Logf func(format string, args ...any)
	// CapacityFiles are saved `etcdbench capacity` or `check` results
	// (--capacity): each member on a volume one of them measured gets
	// its headroom metrics (package headroom).
	CapacityFiles []string
	// MetricsURLs are the members' /metrics URLs given by member name
	// ("" for any member; --etcd-metrics-url); the others' are found from
	// their flags.
	MetricsURLs map[string]string
}

// Exporter traces every etcd it finds and serves the metrics.
type Exporter struct {
	cfg     Config
	reg     *prometheus.Registry
	m       *metrics
	head    *headroom.Headroom
	started time.Time
	// collectors are those registered, for MetricNames.
	collectors []prometheus.Collector

	mu     sync.Mutex
	active map[key]*TargetStatus
	gone   map[string]*TargetStatus // the last process of each member no longer traced, by member and data dir
	// failed are the processes whose trace failed (not their exit), and
	// when to try each again: the interval, doubled at each failure up
	// to maxRetry, so that a process that cannot be traced does not
	// cost a BPF load every scan.
	failed  map[key]retry
	scanned time.Time
	scanErr error
}

// TargetStatus is what the status page shows of one traced process.
type TargetStatus struct {
	Target
	// Device is the block device under the data dir ("" when none:
	// DeviceNote says why).
	Device, DeviceNote string
	// Since is when the tracer attached (zero until it has).
	Since time.Time
	// Ended is when its trace ended, Err why when it was not the
	// process's exit.
	Ended time.Time
	Err   error
	// wal and db are its syncs of the last minute.
	wal, db *recentSyncs
}

// RecentWAL is the p99 of its WAL syncs over the last minute, for the
// status page.
func (t TargetStatus) RecentWAL() string { return t.wal.summary(time.Now()) }

// RecentDB is the p99 of its db syncs over the last minute.
func (t TargetStatus) RecentDB() string { return t.db.summary(time.Now()) }

// New creates an exporter with its registry: the trace's metrics, the
// devices' diskstats, and the exporter's own process and Go runtime
// (process_cpu_seconds_total is its CPU).
func New(cfg Config) *Exporter {
	if cfg.Interval <= 0 {
		cfg.Interval = DefaultInterval
	}
	if cfg.Root == "" {
		cfg.Root = "/"
	}
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	e := &Exporter{cfg: cfg, reg: prometheus.NewRegistry(), started: time.Now(), active: map[key]*TargetStatus{}, gone: map[string]*TargetStatus{}, failed: map[key]retry{}}
	reg := &listingRegisterer{Registerer: e.reg}
	e.m = newMetrics(reg)
	newDiskCollector(cfg.Root, e.devices, reg)
	newMemoryCollector(cfg.Root, e.processes, reg)
	e.head = headroom.New(headroom.Config{Files: cfg.CapacityFiles, MetricsURLs: cfg.MetricsURLs, Root: cfg.Root, Logf: cfg.Logf})
	reg.MustRegister(headroom.NewCollector(Namespace, e.head))
	reg.MustRegister(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), collectors.NewGoCollector())
	e.collectors = reg.list
	e.m.waiting.Set(1)
	return e
}

// Registry is where the exporter's metrics are registered.
func (e *Exporter) Registry() *prometheus.Registry { return e.reg }

// Run scans for etcd processes every Interval and traces each one found
// until ctx ends; it returns ctx's error once every tracer is detached.
func (e *Exporter) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	defer wg.Wait()
	tick := time.NewTicker(e.cfg.Interval)
	defer tick.Stop()
	for {
		e.scan(ctx, &wg)
		e.updateHeadroom(ctx)
		select {
		case <-ctx.Done():
			wg.Wait()
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// updateHeadroom reads the capacity files that changed and the traced
// members' put rates, when there are capacity files.
func (e *Exporter) updateHeadroom(ctx context.Context) {
	if len(e.cfg.CapacityFiles) == 0 {
		return
	}
	e.mu.Lock()
	var ms []headroom.Member
	for _, st := range e.active {
		ms = append(ms, headroom.Member{Name: st.Member, DataDir: st.DataDir, PID: st.PID})
	}
	e.mu.Unlock()
	e.head.Update(ctx, ms)
}

// procRoot is the /proc the exporter reads.
func (e *Exporter) procRoot() string { return filepath.Join(e.cfg.Root, "proc") }

// scan looks for etcd processes and starts a tracer for each new one.
func (e *Exporter) scan(ctx context.Context, wg *sync.WaitGroup) {
	found, err := Discover(e.procRoot(), e.cfg.Filter)
	e.mu.Lock()
	defer e.mu.Unlock()
	e.scanned, e.scanErr = time.Now(), err
	if err != nil {
		e.m.discoveries.WithLabelValues("error").Inc()
		return
	}
	e.m.discoveries.WithLabelValues("ok").Inc()
	seen := map[key]bool{}
	for _, t := range found {
		seen[t.key()] = true
		if _, ok := e.active[t.key()]; ok {
			continue
		}
		if r, ok := e.failed[t.key()]; ok && time.Now().Before(r.at) {
			continue
		}
		st := &TargetStatus{Target: t}
		st.Device, st.DeviceNote = deviceOf(e.cfg.Root, t)
		e.active[t.key()] = st
		wg.Add(1)
		go func() {
			defer wg.Done()
			e.trace(ctx, st)
		}()
	}
	for k := range e.failed {
		if !seen[k] {
			delete(e.failed, k) // gone: its pid may come back as another process
		}
	}
	e.m.waiting.Set(boolFloat(len(found) == 0))
}

// maxRetry bounds the wait before a process whose trace failed is tried
// again.
const maxRetry = 5 * time.Minute

// retry is when a process whose trace failed is tried again, and the
// wait after the next failure.
type retry struct {
	at   time.Time
	next time.Duration
}

// deviceOf finds the block device under t's data dir, as etcd sees it
// (through /proc/PID/root, so across mount namespaces).
func deviceOf(root string, t Target) (string, string) {
	_, disk, note, err := headroom.VolumeOf(root, t.PID, t.DataDir)
	if err != nil {
		return "", err.Error()
	}
	return disk, note
}

// trace traces one process until it exits or ctx ends.
func (e *Exporter) trace(ctx context.Context, st *TargetStatus) {
	member, dir := st.Member, st.DataDir
	pid := strconv.Itoa(st.PID)
	rec := e.m.newRecorder(member, dir, func() {
		e.mu.Lock()
		st.Since = time.Now()
		e.m.targets.Set(float64(e.attachedLocked()))
		e.mu.Unlock()
		e.m.up.WithLabelValues(member, dir).Set(1)
		e.m.attaches.WithLabelValues(member, dir).Inc()
		e.m.info.WithLabelValues(member, dir, pid, st.Device).Set(1)
		e.cfg.Logf("tracing etcd member %s (pid %s, data dir %s, device %s)", member, pid, dir, orNone(st.Device))
	})
	e.mu.Lock()
	st.wal, st.db = rec.wal, rec.db
	e.mu.Unlock()
	tr, err := trace.Run(ctx, trace.Options{PID: st.PID, Observer: rec})
	e.m.up.WithLabelValues(member, dir).Set(0)
	e.m.info.DeleteLabelValues(member, dir, pid, st.Device)
	e.mu.Lock()
	defer e.mu.Unlock()
	st.Ended = time.Now()
	switch {
	case ctx.Err() != nil:
	case err != nil:
		st.Err = err
		r := e.failed[st.key()]
		if r.next == 0 {
			r.next = e.cfg.Interval
		}
		r.at, r.next = time.Now().Add(r.next), min(2*r.next, maxRetry)
		e.failed[st.key()] = r
		e.m.failures.WithLabelValues(member, dir).Inc()
		// Tried again later: said once, and again when it changes.
		if prev := e.gone[member+"\x00"+dir]; prev == nil || prev.Err == nil || prev.Err.Error() != err.Error() {
			e.cfg.Logf("etcd member %s (pid %s): %v; trying again in %s, then less and less often", member, pid, err, r.at.Sub(st.Ended).Round(time.Second))
		}
	case tr != nil && tr.Exited:
		e.cfg.Logf("etcd member %s (pid %s) exited; looking for it again every %s", member, pid, e.cfg.Interval)
	}
	delete(e.active, st.key())
	e.gone[member+"\x00"+dir] = st
	e.m.targets.Set(float64(e.attachedLocked()))
	if st.Err == nil { // exited: waiting until a scan finds it again
		e.m.waiting.Set(boolFloat(len(e.active) == 0))
	}
}

// attachedLocked counts the processes traced now.
func (e *Exporter) attachedLocked() int {
	n := 0
	for _, st := range e.active {
		if !st.Since.IsZero() {
			n++
		}
	}
	return n
}

// devices lists the traced members' devices, for the diskstats collector.
func (e *Exporter) devices() []memberDevice {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []memberDevice
	seen := map[memberDevice]bool{}
	for _, st := range e.active {
		md := memberDevice{st.Member, st.DataDir, st.Device}
		if st.Device != "" && !seen[md] {
			seen[md] = true
			out = append(out, md)
		}
	}
	return out
}

// processes lists the traced members' processes, for the memory
// collector.
func (e *Exporter) processes() []memberProcess {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []memberProcess
	for _, st := range e.active {
		if st.PID > 0 {
			out = append(out, memberProcess{st.Member, st.DataDir, st.PID})
		}
	}
	return out
}

// Status is a snapshot of what the exporter does, for the status page.
type Status struct {
	Started, Scanned time.Time
	ScanErr          error
	Interval         time.Duration
	Filter           Filter
	// Active are the processes traced or being attached; Gone the last
	// process of each member no longer traced.
	Active, Gone []TargetStatus
	// CapacityFiles and Headroom are the --capacity files and each
	// member's headroom (none without --capacity).
	CapacityFiles []headroom.FileStatus
	Headroom      []headroom.MemberStatus
}

// Status returns what the exporter does now.
func (e *Exporter) Status() Status {
	e.mu.Lock()
	defer e.mu.Unlock()
	s := Status{Started: e.started, Scanned: e.scanned, ScanErr: e.scanErr, Interval: e.cfg.Interval, Filter: e.cfg.Filter}
	running := map[string]bool{}
	for _, st := range e.active {
		s.Active = append(s.Active, *st)
		running[st.Member+"\x00"+st.DataDir] = true
	}
	for k, st := range e.gone {
		if !running[k] {
			s.Gone = append(s.Gone, *st)
		}
	}
	s.CapacityFiles, s.Headroom = e.head.Status()
	for _, l := range [][]TargetStatus{s.Active, s.Gone} {
		sort.Slice(l, func(i, j int) bool { return l[i].Member+l[i].DataDir < l[j].Member+l[j].DataDir })
	}
	return s
}

func boolFloat(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

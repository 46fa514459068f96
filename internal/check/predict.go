package check

import (
	"fmt"
	"strings"
	"time"

	"etcdbench/internal/disk"
	"etcdbench/internal/etcdload/observe"
	"etcdbench/internal/finding"
	"etcdbench/internal/report"
	"etcdbench/internal/result"
	"etcdbench/internal/stats"
	"etcdbench/internal/trace"
	"etcdbench/internal/units"
	"etcdbench/internal/verdict"
)

// Names of the traced latencies check's run writes into the put
// workload (Predict reads them typed, from Measured.Traced).
const (
	// TracedLatency is the etcd put workload's latency of the real etcd's
	// WAL fdatasyncs as the eBPF tracer timed them, when it could run.
	TracedLatency = "wal-fdatasync-traced"
	// TracedDiskLatency is the same fdatasyncs without the time their
	// thread was runnable but waiting for a CPU: the disk's and the
	// filesystem's part, which a disk test predicts.
	TracedDiskLatency = "wal-fdatasync-traced-without-cpu-wait"
)

// Measured is what the check measured beyond its workloads, typed, for
// the summary: the disk workloads' WAL p99s and capacity, the members as
// observed around the put load and the eBPF trace of their syncs.
type Measured struct {
	// Disk is what the disk workloads measured.
	Disk disk.Measured
	// PutMembers are the embedded etcd's members around the put load.
	PutMembers []observe.Member
	// Traced are the put load's WAL syncs as eBPF traced them (written
	// as TracedLatency and TracedDiskLatency); nil when the trace could
	// not run.
	Traced *trace.WALSyncs
	// PutLoad is the put load's workload name, whose members' WAL fsync
	// verdicts the trace can explain.
	PutLoad string
	// Estimate is the etcd side's capacity carrying the estimate when no
	// disk model ran (check --quick); nil otherwise.
	Estimate *result.Capacity
}

// cpuExplains names a CPU finding for the put load's WAL fsync verdict
// on v when the trace shows the disk's own part under the limit: the
// traced syncs without the time their thread waited for a CPU (what
// etcd's histogram reads beyond that is CPU too: the wait around the
// call, and the Go runtime's after it). Beside four busy loops the check's put
// load failed at 14.2 ms by etcd's histogram, its traced syncs 11 ms,
// 601 µs without the waits: a faster disk would not have helped.
func (m Measured) cpuExplains(w result.Workload, v verdict.Verdict) (finding.Kind, bool) {
	th := verdict.Defaults().WALFsyncP99
	if m.Traced == nil || m.PutLoad == "" || w.Name != m.PutLoad || v.Check != th.ID {
		return "", false
	}
	if own := m.traced(true); own > 0 && own < units.FromSeconds(th.Limit) {
		return finding.CPU, true
	}
	return "", false
}

// traced is the traced syncs' p99, with or without their waits for a
// CPU, or 0.
func (m Measured) traced(withoutCPUWait bool) time.Duration {
	if m.Traced == nil {
		return 0
	}
	p, _ := m.Traced.P99()
	if withoutCPUWait {
		p, _ = m.Traced.P99WithoutCPUWait()
	}
	return p
}

// Summarize returns the check's own workload, "check": the findings
// (Findings: each cause of a FAIL or WARN verdict, worst first, with its
// evidence and what to do) as notes, and the prediction figures (Predict)
// when the run has them. An interrupted check says so instead of clearing
// the disk: what did not run found nothing.
func Summarize(ws []result.Workload, m Measured, interrupted bool) result.Workload {
	w, ok := Predict(m)
	if !ok {
		w = result.Workload{Latencies: []result.Latency{}, Verdicts: []verdict.Verdict{}, Parameters: map[string]any{}}
	}
	w.Name = "check"
	w.Stop = result.Stop{Mode: "none", Reason: "a summary of the workloads above"}
	if w.Series == nil {
		w.Series = []stats.SecondSample{}
	}
	w.Description = "the answer: what is wrong, worst first, and how well the disk tests predicted the real etcd on this disk"
	fs := findings(ws, m.cpuExplains)
	var notes []string
	// What the storage carries comes first: it is the answer an operator
	// sizes by, and the findings below are read against it.
	c := m.Disk.Capacity
	if c == nil {
		c = m.Estimate
	}
	switch {
	case c != nil && c.Etcd != nil:
		notes = append(notes, "capacity: "+report.EstimateHeadline(c))
		how := "the lower of the disk's model and an embedded etcd on this storage"
		if c.Etcd.WithoutDiskModel {
			how = "an embedded etcd on this storage (this budget runs no disk model)"
		}
		w.Figures = append(w.Figures, result.Figure{Name: "etcd_capacity", Value: c.Etcd.Rate, Unit: "ops/s",
			Description: "put rate an etcd on this storage and machine carries within etcd's limits: capacity's estimate, " + how})
	case c != nil:
		notes = append(notes, "disk capacity: the WAL "+report.CapacitySummary(c))
		w.Figures = append(w.Figures, result.Figure{Name: "disk_capacity", Value: c.Rate, Unit: "ops/s",
			Description: "highest write rate the disk's WAL carried within etcd's limits (capacity sweep)"})
	}
	switch {
	case interrupted && len(fs) == 0:
		notes = append(notes, "finding: none in what ran before the check was interrupted - no answer about this disk or an etcd on it; run the check to its end")
	case interrupted:
		notes = append(notes, "the check was interrupted: the findings below are of what ran before; the rest was not checked")
	case len(fs) == 0:
		notes = append(notes, "finding: nothing failed or warned - this disk and an etcd on it meet etcd's limits")
	}
	for i, f := range fs {
		notes = append(notes, fmt.Sprintf("finding %d (%s): %s - %s", i+1, f.Status, f.Name(), strings.Join(f.Evidence, "; ")))
		advice := f.Advice()
		if f.Advisory {
			advice = "the storage carries the rate above within etcd's limits, but fio's closed-loop recipe (one write and fdatasync at a time, as fast as the storage allows) fails it: etcd runs that way in a burst above its steady rate and while a slow member catches up, so its syncs will be that slow then; a faster volume gives headroom for both (" + advice + ")"
		}
		notes = append(notes, fmt.Sprintf("what to do about finding %d: %s", i+1, advice))
	}
	w.Notes = append(notes, w.Notes...)
	return w
}

// Predict compares the disk tests' WAL fdatasync p99 (idle, and under
// load when it ran) with the p99 of the real etcd's WAL fdatasyncs during
// the put load on the same disk: the eBPF-traced one when present (ns
// resolution), else etcd's histogram (1 ms buckets). It returns the
// workload with those figures, or false when they are missing.
func Predict(m Measured) (result.Workload, bool) {
	idle, loaded := m.Disk.WALP99, m.Disk.WALUnderLoadP99
	if idle <= 0 {
		return result.Workload{}, false
	}
	real, how := m.traced(false), "traced by eBPF at each fdatasync's entry and exit (ns resolution)"
	if real <= 0 {
		if len(m.PutMembers) == 0 || !(m.PutMembers[0].WALFsyncP(0.99) > 0) {
			return result.Workload{}, false
		}
		real = units.FromSeconds(m.PutMembers[0].WALFsyncP(0.99))
		how = "from etcd's own histogram, whose 1 ms buckets make a sub-millisecond p99 coarse"
	}
	w := result.Workload{
		Name:        "prediction",
		Description: "how the synthetic WAL tests' fdatasync p99 compare with the real etcd's on the same disk",
		Parameters:  map[string]any{"real_source": how},
		Latencies:   []result.Latency{},
		Verdicts:    []verdict.Verdict{},
	}
	add := func(name string, d time.Duration, desc string) {
		w.Figures = append(w.Figures, result.Figure{Name: name, Value: d.Seconds(), Unit: "s", Description: desc})
	}
	add("etcd_wal_fdatasync_p99", real, "p99 of the embedded etcd's WAL fdatasyncs during the put load, "+how)
	add("disk_wal_p99", idle, "p99 of `disk wal` (one write + fdatasync at a time, idle disk)")
	w.Figures = append(w.Figures, result.Figure{Name: "ratio_etcd_to_disk_wal", Value: real.Seconds() / idle.Seconds(), Unit: "x",
		Description: "the real etcd's p99 / disk wal's: 1 is a perfect prediction"})
	// p99s printed as the report prints them (three significant digits),
	// so that the ratios beside them read true.
	note := fmt.Sprintf("the real etcd's WAL fdatasync p99 was %s (%s); disk wal predicted %s (%.2fx)", units.FormatDuration(real), how, units.FormatDuration(idle), real.Seconds()/idle.Seconds())
	if loaded > 0 {
		add("disk_wal_under_load_p99", loaded, "p99 of `disk wal-under-load` (group-committed clients and bbolt-like commits meanwhile)")
		w.Figures = append(w.Figures, result.Figure{Name: "ratio_etcd_to_disk_wal_under_load", Value: real.Seconds() / loaded.Seconds(), Unit: "x",
			Description: "the real etcd's p99 / wal-under-load's: 1 is a perfect prediction"})
		note += fmt.Sprintf(", wal-under-load %s (%.2fx)", units.FormatDuration(loaded), real.Seconds()/loaded.Seconds())
	}
	if own := m.traced(true); own > 0 {
		add("etcd_wal_fdatasync_without_cpu_wait_p99", own, "p99 of the same fdatasyncs without the time their thread waited for a CPU (scheduler tracepoints): the disk's and the filesystem's part")
		ref, refName := idle, "disk wal"
		if loaded > 0 {
			ref, refName = loaded, "wal-under-load"
		}
		w.Figures = append(w.Figures, result.Figure{Name: "ratio_etcd_without_cpu_wait_to_disk_test", Value: own.Seconds() / ref.Seconds(), Unit: "x",
			Description: "the real etcd's p99 without its waits for a CPU / " + refName + "'s: 1 is a perfect prediction of the disk's part"})
		note += fmt.Sprintf("; without the time etcd's WAL thread waited for a CPU its p99 was %s (%.2fx %s's)", units.FormatDuration(own), own.Seconds()/ref.Seconds(), refName)
		if real > 0 && float64(own) < 0.77*float64(real) {
			note += fmt.Sprintf(": %s of the real p99 was CPU contention on this machine, which no disk test predicts", units.FormatDuration(real-own))
		}
	}
	w.Notes = []string{note}
	return w, true
}

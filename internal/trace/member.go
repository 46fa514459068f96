package trace

import (
	"context"
	"strings"
	"time"

	"etcdbench/internal/result"
	"etcdbench/internal/stats"
)

// WALSyncs are a process's WAL syncs as a trace timed them, typed, for an
// engine that compares with them: their latency, and the same without
// the time their thread was runnable but waiting for a CPU (the disk's
// and the filesystem's part). The latencies are unnamed: whoever writes
// them into a result names them there.
type WALSyncs struct {
	All, WithoutCPUWait result.Latency
}

// Count is how many WAL syncs were traced.
func (s WALSyncs) Count() int64 { return s.All.Count }

// P99 is the syncs' p99, and false when there is none.
func (s WALSyncs) P99() (time.Duration, bool) { return p99(s.All) }

// P99WithoutCPUWait is the p99 without the waits for a CPU, and false
// when there is none.
func (s WALSyncs) P99WithoutCPUWait() (time.Duration, bool) { return p99(s.WithoutCPUWait) }

func p99(l result.Latency) (time.Duration, bool) {
	v, ok := l.At(99)
	return time.Duration(v), ok
}

// WALSyncs returns the trace's WAL syncs, typed; false when it saw none.
func (tr *Trace) WALSyncs() (WALSyncs, bool, error) {
	wal := tr.col.classes[ClassWAL]
	if wal.syncs() == 0 {
		return WALSyncs{}, false, nil
	}
	var s WALSyncs
	all, err := stats.Encode(wal.syncLat)
	if err != nil {
		return s, false, err
	}
	own, err := stats.Encode(wal.syncOwn)
	if err != nil {
		return s, false, err
	}
	s.All = result.Latency{Summary: stats.Summarize(wal.syncLat), Histogram: all}
	s.WithoutCPUWait = result.Latency{Summary: stats.Summarize(wal.syncOwn), Histogram: own}
	return s, true, nil
}

// Member traces the fdatasyncs of the process pid (an embedded etcd
// member) with eBPF until the returned function is called, which gives
// its WAL syncs, or nil and why there are none: tracing needs root or
// CAP_BPF and CAP_PERFMON.
func Member(ctx context.Context, pid int) func() (*WALSyncs, string) {
	tctx, cancel := context.WithCancel(ctx)
	type outcome struct {
		tr  *Trace
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		tr, err := Run(tctx, Options{PID: pid})
		done <- outcome{tr, err}
	}()
	return func() (*WALSyncs, string) {
		cancel()
		o := <-done
		if o.tr == nil {
			return nil, "not traced (" + strings.Join(strings.Fields(o.err.Error()), " ") + ")"
		}
		s, ok, err := o.tr.WALSyncs()
		if err != nil {
			return nil, "the trace could not be read: " + err.Error()
		}
		if !ok {
			return nil, "the eBPF trace saw no WAL fdatasync"
		}
		return &s, ""
	}
}

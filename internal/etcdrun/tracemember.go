package etcdrun

import (
	"context"
	"fmt"
	"strings"
	"time"

	"etcdbench/internal/result"
	"etcdbench/internal/trace"
	"etcdbench/internal/verdict"
)

// The latencies TraceMember gives, as the tracer names them.
const (
	TracedSync       = "wal sync"
	TracedSyncNoWait = "wal sync without cpu wait"
)

// TraceMember traces the fdatasyncs of the embedded etcd member process
// pid with eBPF until the returned function is called, which gives its
// WAL sync latency (TracedSync) and the same without its thread's waits
// for a CPU (TracedSyncNoWait), or why there are none: tracing needs
// root or CAP_BPF and CAP_PERFMON.
func TraceMember(ctx context.Context, pid int) func() (lats []result.Latency, why string) {
	tctx, cancel := context.WithCancel(ctx)
	type outcome struct {
		tr  *trace.Trace
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		tr, err := trace.Run(tctx, trace.Options{PID: pid})
		done <- outcome{tr, err}
	}()
	return func() ([]result.Latency, string) {
		cancel()
		o := <-done
		if o.tr == nil {
			return nil, "not traced (" + strings.Join(strings.Fields(o.err.Error()), " ") + ")"
		}
		w, err := o.tr.Workload(verdict.Defaults())
		if err != nil {
			return nil, "the trace could not be read: " + err.Error()
		}
		var lats []result.Latency
		for _, name := range []string{TracedSync, TracedSyncNoWait} {
			if l := w.Latency(name); l != nil {
				lats = append(lats, *l)
			}
		}
		if len(lats) == 0 {
			return nil, "the eBPF trace saw no WAL fdatasync"
		}
		return lats, ""
	}
}

// tracedFigures are a step's traced WAL sync p99s as extra figures:
// traced_wal_sync_p99 and traced_wal_sync_no_cpu_wait_p99 (seconds).
func tracedFigures(lats []result.Latency) []result.Figure {
	var fs []result.Figure
	for _, l := range lats {
		p99, ok := l.At(99)
		if !ok {
			continue
		}
		switch l.Name {
		case TracedSync:
			fs = append(fs, result.Figure{Name: "traced_wal_sync_p99", Value: time.Duration(p99).Seconds(), Unit: "s",
				Description: fmt.Sprintf("the member's WAL fdatasync p99, timed by eBPF in the kernel (%d syncs)", l.Count)})
		case TracedSyncNoWait:
			fs = append(fs, result.Figure{Name: "traced_wal_sync_no_cpu_wait_p99", Value: time.Duration(p99).Seconds(), Unit: "s",
				Description: "the same syncs without the time their thread waited for a CPU: the disk's and the filesystem's own time"})
		}
	}
	return fs
}

package etcdrun

import (
	"context"
	"strings"

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

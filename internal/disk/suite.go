package disk

import (
	"context"
	"time"

	"etcdbench/internal/result"
)

// Measured is what a suite's WAL workloads measured, typed, for an
// engine that compares with it (check's prediction): no engine finds
// these again in the results by name.
type Measured struct {
	// WALP99 is the idle WAL's (wal's) fdatasync p99; 0 when the suite
	// had none or it measured nothing.
	WALP99 time.Duration
	// WALUnderLoadP99 is wal-under-load's fdatasync p99, or 0.
	WALUnderLoadP99 time.Duration
	// Capacity is the capacity sweep's answer, when the suite ran one.
	Capacity *result.Capacity
}

// syncLatency is the name of the WAL workloads' fdatasync latency.
const syncLatency = "fdatasync"

// syncP99 is the p99 of wl's fdatasync latency, or 0.
func syncP99(wl result.Workload) time.Duration {
	l := wl.Latency(syncLatency)
	if l == nil {
		return 0
	}
	v, ok := l.At(99)
	if !ok {
		return 0
	}
	return time.Duration(v)
}

// Named is a configured workload with its name.
type Named struct {
	Name     string
	Workload Workload
}

// SpaceNeeded is the most free space any of ws needs: they run one after
// the other and each removes its files when it ends.
func SpaceNeeded(ws []Named) int64 {
	var need int64
	for _, w := range ws {
		need = max(need, w.Workload.SpaceNeeded())
	}
	return need
}

// RunSuite runs ws in order in env.Dir. The idle WAL's result, when the
// suite has one, becomes the baseline wal-under-load compares with. It
// stops at the first error; the results so far are returned, including an
// interrupted workload's partial result, with what its WAL workloads
// measured, typed. onStart, if set, is called before each workload.
func RunSuite(ctx context.Context, env Env, ws []Named, onStart func(i int, name string)) ([]result.Workload, Measured, error) {
	var out []result.Workload
	var m Measured
	for i, w := range ws {
		if err := ctx.Err(); err != nil {
			return out, m, err
		}
		if onStart != nil {
			onStart(i, w.Name)
		}
		wl, err := w.Workload.Run(ctx, env)
		if wl.Name != "" {
			out = append(out, wl)
			if wl.Name == "wal" && err == nil {
				base := wl
				env.Baseline = &base
			}
			switch w.Workload.(type) {
			case walWorkload:
				m.WALP99 = syncP99(wl)
			case underLoadWorkload:
				m.WALUnderLoadP99 = syncP99(wl)
			}
			if wl.Capacity != nil { // the capacity sweep's (package diskmodel)
				m.Capacity = wl.Capacity
			}
		}
		if err != nil {
			return out, m, err
		}
	}
	return out, m, nil
}

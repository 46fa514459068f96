package disk

import (
	"context"

	"etcdbench/internal/result"
)

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
// interrupted workload's partial result. onStart, if set, is called before
// each workload.
func RunSuite(ctx context.Context, env Env, ws []Named, onStart func(i int, name string)) ([]result.Workload, error) {
	var out []result.Workload
	for i, w := range ws {
		if err := ctx.Err(); err != nil {
			return out, err
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
		}
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

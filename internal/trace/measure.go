package trace

import (
	"context"
	"errors"
	"fmt"
	"time"

	"etcdbench/internal/result"
	"etcdbench/internal/run"
	"etcdbench/internal/sysinfo"
	"etcdbench/internal/verdict"
)

// Measure traces o.PID for o.Duration (or until ctx ends or the process
// exits) and returns the trace as a result for the command line args,
// with the environment of the disk under the WAL, where etcd's
// fdatasyncs went. An interrupted trace returns what it saw with the
// context's error; a process that does not exist is a usage error.
func Measure(ctx context.Context, o Options, args []string) (*result.Result, error) {
	res := run.NewResult(args)
	tr, err := Run(ctx, o)
	switch {
	case errors.Is(err, ErrNoProcess):
		return nil, run.Usage(err)
	case errors.Is(err, ErrPermission):
		return nil, fmt.Errorf("%w; without that privilege, 'etcdbench diagnose wal --pid %d --yes' traces with strace (which slows etcd while attached)", err, o.PID)
	case tr == nil:
		return nil, err
	}
	th := verdict.Defaults()
	th.RunLonger = "--duration" // trace's own flag for a longer trace
	w, werr := tr.Workload(th)
	if werr != nil {
		return nil, errors.Join(err, werr)
	}
	res.Workloads = []result.Workload{w}
	res.Environment = sysinfo.Collect("/", tr.Dir(ClassWAL, "/"))
	res.Interrupted = run.Interrupted(ctx, err)
	res.Finish(time.Now().UTC())
	return res, err
}

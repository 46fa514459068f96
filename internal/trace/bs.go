package trace

import (
	"context"
	"errors"
	"fmt"
	"time"

	"etcdbench/internal/etcdproc"
	"etcdbench/internal/run"
	"etcdbench/internal/walfile"
)

// ErrNoBSSource is the usage error of --bs auto without a WAL to read.
var ErrNoBSSource = errors.New("--bs auto needs a WAL to measure: add --from-data-dir DIR (etcd's data dir) or --from-pid PID (a running etcd)")

// AutoBS returns the --bs that matches a real etcd's WAL batches, and
// where it came from: for a running etcd found by its pid (under
// procRoot), its WAL watched for 5 s by this tracer where it may run,
// else its open segments' directory decoded offline; for a data dir, its
// WAL decoded offline.
func AutoBS(ctx context.Context, procRoot, fromDataDir string, fromPID int) (int64, string, error) {
	walDir := ""
	switch {
	case fromDataDir != "" && fromPID != 0:
		return 0, "", run.Usagef("--from-data-dir and --from-pid are alternatives: give one")
	case fromDataDir != "":
		dirs, err := walfile.FindDir(fromDataDir)
		if err != nil {
			return 0, "", run.Usage(err)
		}
		walDir = dirs.WALDir
	case fromPID > 0:
		bs, from, ok := tracedBS(ctx, fromPID)
		if ok {
			return bs, from, nil
		}
		files, err := etcdproc.ReadFiles(procRoot, fromPID)
		if err != nil {
			return 0, "", err
		}
		if files.WALDir == "" {
			return 0, "", fmt.Errorf("process %d has no WAL segment (*.wal) open: is it an etcd server?", fromPID)
		}
		walDir = files.WALDir
	default:
		return 0, "", run.Usage(ErrNoBSSource)
	}
	p, err := walfile.ProfileDir(walDir)
	if err != nil {
		return 0, "", err
	}
	rec, ok := p.Recommend("")
	if !ok {
		return 0, "", fmt.Errorf("--bs auto: the WAL in %s has no write+fdatasync batch yet (a new member); give --bs", walDir)
	}
	return rec.BS, fmt.Sprintf("median %d bytes per write+fdatasync in %s", rec.Median, walDir), nil
}

// bsTraceTime is how long --bs auto --from-pid watches etcd with eBPF.
const bsTraceTime = 5 * time.Second

// tracedBS watches process pid's WAL with the eBPF tracer for bsTraceTime
// and returns the --bs that matches it; ok is false when the tracer cannot
// run here (no privilege) or etcd synced its WAL too few times meanwhile,
// and AutoBS decodes the WAL files instead.
func tracedBS(ctx context.Context, pid int) (int64, string, bool) {
	tr, err := Run(ctx, Options{PID: pid, Duration: bsTraceTime})
	if err != nil {
		return 0, "", false
	}
	bs, syncs, ok := tr.RecommendedBS()
	if !ok || syncs < 10 {
		return 0, "", false
	}
	return bs, fmt.Sprintf("the median bytes per WAL write+fdatasync of process %d, %d syncs traced by eBPF over %v", pid, syncs, bsTraceTime), true
}

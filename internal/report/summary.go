package report

import (
	"fmt"
	"strings"
	"time"

	"etcdbench/internal/result"
	"etcdbench/internal/units"
)

// counted is what a workload's ops count, in words: an etcd load counts
// requests, a WAL test write+fdatasync cycles, the other workloads
// operations. The summary line and the per-second chart both say it, so
// they name the same thing.
type counted struct {
	ops  string // the ops, e.g. "requests"
	rate string // the ops per second, e.g. "requests/s"
}

// isEtcdLoad reports whether a workload is a load on etcd (etcd-put,
// etcd-range, etcd-check-m, etcd-capacity...): its ops are requests, and
// the syncs behind them are etcd's, counted in its figures.
func isEtcdLoad(wl *result.Workload) bool { return strings.HasPrefix(wl.Name, "etcd-") }

// isWALTest reports whether a workload is one of disk's WAL tests (wal,
// wal-under-load): each op is a write and the fdatasync after it.
func isWALTest(wl *result.Workload) bool {
	return wl.Name == "wal" || strings.HasPrefix(wl.Name, "wal-")
}

func countedBy(wl *result.Workload) counted {
	switch {
	case isEtcdLoad(wl):
		return counted{ops: "requests", rate: "requests/s"}
	case isWALTest(wl):
		return counted{ops: "write+fdatasync cycles", rate: "syncs/s"}
	case wl.Data != nil:
		return counted{ops: "revisions read", rate: "revisions/s"}
	}
	return counted{ops: "operations", rate: "ops/s"}
}

// workloadSummary is the line under a workload's name saying how much it
// did and how fast, in what its ops count; "" when it did nothing.
func workloadSummary(wl *result.Workload) string {
	dur := units.FormatDuration(time.Duration(wl.DurationNs))
	c := countedBy(wl)
	switch {
	case wl.DurationNs <= 0 && wl.Ops == 0 && wl.Bytes == 0:
		return ""
	case wl.DurationNs <= 0: // nothing timed, e.g. a WAL decoded from its files
		return fmt.Sprintf("%s, %s", operations(wl.Ops), units.FormatBytes(wl.Bytes))
	case isEtcdLoad(wl) && wl.Bytes == 0: // ranges, watches: no bytes written to count
		return fmt.Sprintf("%d %s in %s: %.0f %s", wl.Ops, c.ops, dur, wl.OpsPerSec, c.rate)
	case isEtcdLoad(wl):
		return fmt.Sprintf("%d %s, %s in %s: %.0f %s, %s/s",
			wl.Ops, c.ops, units.FormatBytes(wl.Bytes), dur, wl.OpsPerSec, c.rate, units.FormatBytes(int64(wl.BytesPerSec)))
	}
	if bs := intParam(wl.Parameters, "block_size"); bs > 0 && wl.Name == "wal" {
		if _, open := wl.Parameters["rate"]; !open {
			return fmt.Sprintf("%d %s of %d bytes (%s) in %s: %.0f IOPS, %s/s",
				wl.Ops, c.ops, bs, units.FormatBytes(wl.Bytes), dur, wl.OpsPerSec, units.FormatBytes(int64(wl.BytesPerSec)))
		}
	}
	return fmt.Sprintf("%d %s, %s in %s: %.0f %s, %s/s",
		wl.Ops, c.ops, units.FormatBytes(wl.Bytes), dur, wl.OpsPerSec, c.rate, units.FormatBytes(int64(wl.BytesPerSec)))
}

package verdict

import "time"

// CheckWALFsyncUnderLoad is the ID of the WAL fdatasync p99 verdict of
// the disk's WAL under load (WALFsyncP99 judged while other writers run).
const CheckWALFsyncUnderLoad = "wal_fsync_p99_under_load"

// Threshold is one limit a figure is judged against, with where it comes from.
type Threshold struct {
	ID     string  `json:"id"`     // stable identifier, e.g. "wal_fsync_p99"
	Title  string  `json:"title"`  // what is judged, for people
	Limit  float64 `json:"limit"`  // in Unit
	Unit   string  `json:"unit"`   // "s", "ops/s", "ratio"
	Source string  `json:"source"` // document or reasoning the limit comes from
}

// Thresholds is the full set the WAL check uses. Defaults returns the
// documented values; the command line may override any of them.
type Thresholds struct {
	WALFsyncP99      Threshold // fdatasync p99 must be below this
	WarnMargin       Threshold // WARN when p99 is within this fraction under the limit
	SyncIOPSMin      Threshold // sequential synced IOPS must reach this
	SyncIOPSHeavy    Threshold // recommended for heavily loaded clusters
	ImplausibleSync  Threshold // fdatasync p50 below this cannot have reached a device
	RotationalSync   Threshold // p50 below this on a spinning disk means a cache answered
	BackendCommitP99 Threshold // bbolt commit p99
	RecoveryBW       Threshold // bandwidth a member needs to recover at all
	RecoveryBWLarge  Threshold // bandwidth recommended for large clusters
	// ScheduleLag is how far behind its schedule an open-loop WAL may end:
	// more means the disk did not keep the offered rate.
	ScheduleLag Threshold
	// CapacityMin and CapacityHeavy judge a capacity sweep's highest
	// passing rate: the smallest and the medium load of etcdctl check perf.
	CapacityMin, CapacityHeavy Threshold
	// RunLonger is how the command that judges runs longer, in its own
	// flags (e.g. "--runtime", "--thorough"), for the advice of a verdict
	// the run ended before deciding. Empty advises running longer without
	// naming a flag, so that no command names one it does not have.
	RunLonger string
}

// Defaults returns the thresholds etcd's documentation and operators use.
func Defaults() Thresholds {
	return Thresholds{
		WALFsyncP99: Threshold{
			ID: "wal_fsync_p99", Title: "WAL fdatasync p99", Limit: (10 * time.Millisecond).Seconds(), Unit: "s",
			Source: "etcd FAQ and docs: etcd_disk_wal_fsync_duration_seconds p99 should be below 10 ms",
		},
		WarnMargin: Threshold{
			ID: "wal_fsync_p99_margin", Title: "WAL fdatasync p99 headroom", Limit: 0.20, Unit: "ratio",
			Source: "fio-for-etcd guidance: other writers on the disk make fdatasync slower, so a p99 just under 10 ms is not a pass in practice",
		},
		SyncIOPSMin: Threshold{
			ID: "sync_iops_min", Title: "sequential synced IOPS", Limit: 50, Unit: "ops/s",
			Source: "etcd op-guide/hardware.md: 50 sequential IOPS (e.g. a 7200 RPM disk)",
		},
		SyncIOPSHeavy: Threshold{
			ID: "sync_iops_heavy", Title: "sequential synced IOPS for heavy load", Limit: 500, Unit: "ops/s",
			Source: "etcd op-guide/hardware.md: 500 sequential IOPS for heavily loaded clusters",
		},
		ImplausibleSync: Threshold{
			ID: "sync_implausibly_fast", Title: "fdatasync reaches stable storage", Limit: (10 * time.Microsecond).Seconds(), Unit: "s",
			Source: "etcdbench: an fdatasync after an append commits the journal with at least one device write and flush; no device completes that in under 10 us",
		},
		RotationalSync: Threshold{
			ID: "rotational_sync_fast", Title: "spinning disk flushes to media", Limit: (1 * time.Millisecond).Seconds(), Unit: "s",
			Source: "etcdbench: a 7200 RPM disk needs about 4 ms (half a rotation) to put a block on the platter; under 1 ms a cache acknowledged the flush",
		},
		BackendCommitP99: Threshold{
			ID: "backend_commit_p99", Title: "backend commit p99", Limit: (25 * time.Millisecond).Seconds(), Unit: "s",
			Source: "etcd FAQ: etcd_disk_backend_commit_duration_seconds p99 should be below 25 ms",
		},
		RecoveryBW: Threshold{
			ID: "recovery_bandwidth", Title: "bandwidth for member recovery", Limit: 10e6, Unit: "B/s",
			Source: "etcd op-guide/hardware.md: 10 MB/s recovers 100 MB in 15 s",
		},
		RecoveryBWLarge: Threshold{
			ID: "recovery_bandwidth_large", Title: "bandwidth for large clusters", Limit: 100e6, Unit: "B/s",
			Source: "etcd op-guide/hardware.md: 100 MB/s or more recovers 1 GB in 15 s, recommended for large clusters",
		},
		ScheduleLag: Threshold{
			ID: "wal_schedule_lag", Title: "WAL keeps the offered rate", Limit: 0.5, Unit: "s",
			Source: "etcdctl check perf: the slowest request must take at most 0.5 s; an entry still waiting longer than that at the end means the backlog grew",
		},
		CapacityMin: Threshold{
			ID: "capacity_min", Title: "write rate carried within the limits", Limit: 150, Unit: "ops/s",
			Source: "etcdctl check perf's smallest load, s: 150 puts/s",
		},
		CapacityHeavy: Threshold{
			ID: "capacity_heavy", Title: "write rate carried for a busy cluster", Limit: 1000, Unit: "ops/s",
			Source: "etcdctl check perf's medium load, m: 1000 puts/s",
		},
	}
}

// Override replaces a threshold's limit and records that the user set it.
func (t *Threshold) Override(limit float64, flag string) {
	t.Limit = limit
	t.Source = "command line " + flag + " (default source: " + t.Source + ")"
}

package verdict

import "time"

// DiagnoseThresholds are the limits `etcdbench diagnose` judges a live
// etcd's metrics and logs against. Each one carries its source; the disk
// limits are the same as the disk tests' (Defaults).
type DiagnoseThresholds struct {
	WALFsyncP99      Threshold // etcd_disk_wal_fsync_duration_seconds p99
	BackendCommitP99 Threshold // etcd_disk_backend_commit_duration_seconds p99
	ApplyP99         Threshold // etcd_server_apply_duration_seconds p99
	SlowApplies      Threshold // etcd_server_slow_apply_total increase
	CPUBusy          Threshold // process CPU seconds per second / cores
	PeerRTTP99       Threshold // etcd_network_peer_round_trip_time_seconds p99
	HeartbeatFails   Threshold // etcd_server_heartbeat_send_failures_total increase
	LeaderChanges    Threshold // etcd_server_leader_changes_seen_total increase
	ProposalsFailed  Threshold // etcd_server_proposals_failed_total increase
	ProposalsPending Threshold // etcd_server_proposals_pending
	DBQuota          Threshold // db size / quota
	Fragmentation    Threshold // in-use / total size of the db
	FragmentedMin    Threshold // in-use size from which fragmentation matters
	GRPCErrors       Threshold // non-OK share of grpc_server_handled_total
	CompactionPause  Threshold // compaction pause p99
}

// DiagnoseDefaults returns the documented limits of the diagnosis rules.
func DiagnoseDefaults() DiagnoseThresholds {
	d := Defaults()
	return DiagnoseThresholds{
		WALFsyncP99:      d.WALFsyncP99,
		BackendCommitP99: d.BackendCommitP99,
		ApplyP99: Threshold{
			ID: "apply_p99", Title: "apply duration p99", Limit: (100 * time.Millisecond).Seconds(), Unit: "s",
			Source: "etcd server/embed/config.go: --warning-apply-duration 100 ms, over which etcd logs \"apply request took too long\"",
		},
		SlowApplies: Threshold{
			ID: "slow_applies", Title: "slow applies", Limit: 1, Unit: "count",
			Source: "etcd_server_slow_apply_total counts applies over --warning-apply-duration (100 ms); any in the window means requests waited",
		},
		CPUBusy: Threshold{
			ID: "process_cpu_busy", Title: "etcd process CPU per core", Limit: 0.9, Unit: "ratio",
			Source: "etcdbench: a process using 90 % of its cores (process_cpu_seconds_total rate / GOMAXPROCS) leaves raft and apply goroutines waiting for a CPU",
		},
		PeerRTTP99: Threshold{
			ID: "peer_rtt_p99", Title: "peer round-trip time p99", Limit: 0.15, Unit: "s",
			Source: "etcd contrib/mixin alert etcdMemberCommunicationSlow: etcd_network_peer_round_trip_time_seconds p99 > 0.15 s; etcd tuning docs: heartbeat interval near the peer round trip",
		},
		HeartbeatFails: Threshold{
			ID: "heartbeat_send_failures", Title: "heartbeat send failures", Limit: 1, Unit: "count",
			Source: "etcd server/etcdserver/raft.go: \"leader failed to send out heartbeat on time\" (over 2 x heartbeat interval), counted in etcd_server_heartbeat_send_failures_total",
		},
		LeaderChanges: Threshold{
			ID: "leader_changes", Title: "leader changes", Limit: 1, Unit: "count",
			Source: "etcd contrib/mixin alert etcdHighNumberOfLeaderChanges (4 in 15 min); any change inside a short window means an election stalled writes",
		},
		ProposalsFailed: Threshold{
			ID: "proposals_failed", Title: "failed proposals", Limit: 5, Unit: "count",
			Source: "etcd contrib/mixin alert etcdHighNumberOfFailedProposals: more than 5 (in an hour); proposals fail on leader loss and on clients giving up",
		},
		ProposalsPending: Threshold{
			ID: "proposals_pending", Title: "pending proposals", Limit: 100, Unit: "count",
			Source: "etcdbench: etcd_server_proposals_pending stays near the number of clients; hundreds waiting means commits do not keep up",
		},
		DBQuota: Threshold{
			ID: "db_quota", Title: "database size / quota", Limit: 0.8, Unit: "ratio",
			Source: "etcd op-guide/maintenance.md: at the quota (--quota-backend-bytes) etcd raises a NOSPACE alarm and refuses writes; contrib/mixin alert etcdDatabaseQuotaLowSpace fires at 95 %, 80 % leaves time to act",
		},
		Fragmentation: Threshold{
			ID: "db_fragmentation", Title: "database in use / total size", Limit: 0.5, Unit: "ratio",
			Source: "etcd contrib/mixin alert etcdDatabaseHighFragmentationRatio: in-use < 50 % of the file with more than 100 MiB in use; etcd op-guide/maintenance.md: defragment",
		},
		FragmentedMin: Threshold{
			ID: "db_fragmentation_min_size", Title: "database in use", Limit: 100 << 20, Unit: "B",
			Source: "etcd contrib/mixin alert etcdDatabaseHighFragmentationRatio: only above 100 MiB in use",
		},
		CompactionPause: Threshold{
			ID: "compaction_pause_p99", Title: "compaction pause p99", Limit: (100 * time.Millisecond).Seconds(), Unit: "s",
			Source: "etcdbench: compaction holds the backend between its batches (etcd_debugging_mvcc_db_compaction_pause_duration_milliseconds); pauses over etcd's 100 ms --warning-apply-duration delay requests as much as a slow apply",
		},
		GRPCErrors: Threshold{
			ID: "grpc_errors", Title: "failed gRPC requests", Limit: 0.01, Unit: "ratio",
			Source: "etcd contrib/mixin alert etcdHighNumberOfFailedGRPCRequests: more than 1 % of requests failed (5 % critical)",
		},
	}
}

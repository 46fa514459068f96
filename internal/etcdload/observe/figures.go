package observe

import (
	"fmt"
	"math"

	"etcdbench/internal/result"
)

// The machine's figures of every etcd load.
const (
	HostCPUBusyFigure = "host_cpu_busy"
	HostCPUsFigure    = "host_cpus"
)

// HostFigures are the machine's figures: host_cpu_busy and host_cpus;
// none for nil.
func HostFigures(h *Host) []result.Figure {
	if h == nil {
		return nil
	}
	return []result.Figure{
		{Name: HostCPUBusyFigure, Value: h.Busy, Unit: "ratio", Description: "share of the CPU time of the machine etcdbench runs on (an embedded etcd's too) that was busy during the load, other processes' included (/proc/stat: user, nice, system, irq, softirq, steal)"},
		{Name: HostCPUsFigure, Value: float64(h.CPUs), Unit: "count", Description: "online CPUs of the machine etcdbench runs on"},
	}
}

// Figures are what the members recorded, as a result's figures named
// after each member: its WAL fsync and backend commit counts, p50 and
// p99 (e.g. "member0_wal_fsync_p99" in seconds), CPU, cores, slow
// applies, leader changes, database size, apply and peer round-trip
// p99; then each member's sampled backlog. A figure the member did not
// give (NaN) is left out.
func Figures(ms []Member) []result.Figure {
	var out []result.Figure
	add := func(name string, v float64, unit, what string) {
		if !math.IsNaN(v) {
			out = append(out, result.Figure{Name: name, Value: v, Unit: unit, Description: what})
		}
	}
	for _, m := range ms {
		n := m.Target.Name
		for _, h := range []struct {
			id, what string
			count    float64
			p        func(float64) float64
		}{{"wal_fsync", "WAL fdatasync", m.WALFsync.Count, m.WALFsyncP}, {"backend_commit", "backend commit", m.BackendCommit.Count, m.BackendCommitP}} {
			out = append(out, result.Figure{Name: n + "_" + h.id + "s", Value: h.count, Unit: "count",
				Description: h.what + "s during the load (etcd's histogram)"})
			for _, q := range []float64{0.5, 0.99} {
				add(fmt.Sprintf("%s_%s_p%g", n, h.id, 100*q), h.p(q), "s",
					fmt.Sprintf("%s p%g during the load (etcd's histogram, interpolated as histogram_quantile does)", h.what, 100*q))
			}
		}
		add(n+"_cpu", m.CPU, "x", "CPUs the member's process used between the scrapes around the load (process_cpu_seconds_total, in 10 ms ticks)")
		add(n+"_cores", m.Cores, "count", "CPUs the member's Go runtime runs on at once (GOMAXPROCS, go_sched_gomaxprocs_threads)")
		add(n+"_slow_applies", m.SlowApplies, "count", "applies slower than --warning-apply-duration (100 ms) during the load")
		add(n+"_leader_changes", m.LeaderChanges, "count", "leader changes seen during the load")
		add(n+"_late_heartbeats", m.LateHeartbeats, "count", "heartbeats this member, leading, sent later than twice the heartbeat interval during the load (etcd_server_heartbeat_send_failures_total: its warning \"leader failed to send out heartbeat on time\")")
		add(n+"_db_size", m.DBSize, "B", "backend database file size after the load")
		add(n+"_apply_p99", m.ApplyP99, "s", "apply duration p99 during the load (etcd's histogram, 0.1 ms buckets at the bottom)")
		add(n+"_peer_rtt_p99", m.PeerRTTP99, "s", "peer round-trip time p99 during the load (etcd's histogram, 0.1 ms buckets at the bottom)")
	}
	for _, m := range ms {
		b, n := m.Backlog, m.Target.Name
		if b.Samples == 0 {
			continue
		}
		out = append(out,
			result.Figure{Name: n + "_proposals_pending_max", Value: b.Pending, Unit: "count",
				Description: "the most requests this member had proposed and not yet applied (etcd_server_proposals_pending) in any sample during the load"},
			result.Figure{Name: n + "_proposals_unapplied_max", Value: b.Unapplied, Unit: "count",
				Description: "the most entries committed but not yet applied (etcd_server_proposals_committed_total - etcd_server_proposals_applied_total) in any sample during the load"},
			result.Figure{Name: n + "_backlog_samples", Value: float64(b.Samples), Unit: "count",
				Description: "samples of the member's /metrics taken during the load for its proposal backlog"},
		)
	}
	return out
}

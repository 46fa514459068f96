package cost

import (
	"testing"

	"etcdbench/internal/etcdload/metrics"
)

// scraped is a leader's and a new member's /metrics after one snapshot
// (etcd 3.4.23's text, trimmed to the snapshot's series).
const scraped = `# HELP etcd_network_snapshot_send_failures Total number of snapshot send failures
# TYPE etcd_network_snapshot_send_failures counter
etcd_network_snapshot_send_failures{To="2b0c6e0f5d1a7e3"} 1
# HELP etcd_network_snapshot_send_total_duration_seconds Total latency distributions of v3 snapshot sends
# TYPE etcd_network_snapshot_send_total_duration_seconds histogram
etcd_network_snapshot_send_total_duration_seconds_bucket{To="8e9e05c52164694d",le="0.1"} 0
etcd_network_snapshot_send_total_duration_seconds_bucket{To="8e9e05c52164694d",le="0.2"} 0
etcd_network_snapshot_send_total_duration_seconds_bucket{To="8e9e05c52164694d",le="0.4"} 1
etcd_network_snapshot_send_total_duration_seconds_bucket{To="8e9e05c52164694d",le="+Inf"} 1
etcd_network_snapshot_send_total_duration_seconds_sum{To="8e9e05c52164694d"} 0.3125
etcd_network_snapshot_send_total_duration_seconds_count{To="8e9e05c52164694d"} 1
# HELP etcd_network_snapshot_receive_total_duration_seconds Total latency distributions of v3 snapshot receives
# TYPE etcd_network_snapshot_receive_total_duration_seconds histogram
etcd_network_snapshot_receive_total_duration_seconds_bucket{From="a1b2c3",le="0.1"} 0
etcd_network_snapshot_receive_total_duration_seconds_bucket{From="a1b2c3",le="+Inf"} 1
etcd_network_snapshot_receive_total_duration_seconds_sum{From="a1b2c3"} 0.25
etcd_network_snapshot_receive_total_duration_seconds_count{From="a1b2c3"} 1
# HELP etcd_snap_db_fsync_duration_seconds The latency distributions of fsyncing .snap.db file
# TYPE etcd_snap_db_fsync_duration_seconds histogram
etcd_snap_db_fsync_duration_seconds_bucket{le="0.001"} 0
etcd_snap_db_fsync_duration_seconds_bucket{le="+Inf"} 1
etcd_snap_db_fsync_duration_seconds_sum 0.125
etcd_snap_db_fsync_duration_seconds_count 1
`

func TestSnapshotTransfers(t *testing.T) {
	f, err := metrics.Parse([]byte(scraped))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		got  Transfer
		want Transfer
	}{
		{"sent to the new member", SnapshotSent(f, 0x8e9e05c52164694d), Transfer{Seconds: 0.3125, Count: 1}},
		{"failed to another", SnapshotSent(f, 0x2b0c6e0f5d1a7e3), Transfer{Failures: 1}},
		{"nothing yet", SnapshotSent(f, 1), Transfer{}},
		{"received from the leader", SnapshotReceived(f, 0xa1b2c3), Transfer{Seconds: 0.25, Count: 1, Fsync: 0.125}},
		{"nothing from another", SnapshotReceived(f, 0x2b0c6e0f5d1a7e3), Transfer{Fsync: 0.125}},
		{"the second of two", Transfer{Seconds: 0.75, Count: 2, Fsync: 0.5}.Since(Transfer{Seconds: 0.25, Count: 1, Fsync: 0.125}), Transfer{Seconds: 0.5, Count: 1, Fsync: 0.375}},
		{"no metrics at all", SnapshotSent(metrics.Families{}, 0x8e9e05c52164694d), Transfer{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.got != c.want {
				t.Errorf("got %+v, want %+v", c.got, c.want)
			}
		})
	}
}

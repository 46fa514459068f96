package cost

import (
	"strconv"

	"etcdbench/internal/etcdload/metrics"
)

// etcd's own metrics of a snapshot sent to a new member (rafthttp's
// snapshot sender and handler, the same names and labels from 3.4 to
// 3.7): the leader observes the send when the receiver answered its
// POST, which it does after it saved the db and fsynced it; the receiver
// observes the receive as it answers.
const (
	// SnapshotSendMetric is the leader's histogram, labelled "To" with
	// the receiver's member ID in hex.
	SnapshotSendMetric = "etcd_network_snapshot_send_total_duration_seconds"
	// SnapshotReceiveMetric is the receiver's histogram, labelled "From"
	// with the sender's member ID in hex.
	SnapshotReceiveMetric = "etcd_network_snapshot_receive_total_duration_seconds"
	// SnapshotSendFailuresMetric counts the leader's failed sends, "To".
	SnapshotSendFailuresMetric = "etcd_network_snapshot_send_failures"
	// SnapshotDBFsyncMetric is the receiver's histogram of its fsyncs of
	// a received db (snap's SaveDBFrom), unlabelled: the part of the
	// receive the disk makes durable.
	SnapshotDBFsyncMetric = "etcd_snap_db_fsync_duration_seconds"
)

// Transfer is one snapshot sent between two members, as their metrics
// tell it.
type Transfer struct {
	Seconds  float64 // the histogram's sum over the member pair
	Count    float64 // sends (receives) it counted
	Failures float64 // failed sends (leader's side only)
	// Fsync is the receiver's seconds fsyncing received dbs (receiver's
	// side only: all it received, from any member).
	Fsync float64
}

// Since is t less what before counted: the transfers between two reads
// of the same metrics.
func (t Transfer) Since(before Transfer) Transfer {
	return Transfer{Seconds: t.Seconds - before.Seconds, Count: t.Count - before.Count,
		Failures: t.Failures - before.Failures, Fsync: t.Fsync - before.Fsync}
}

// SnapshotSent reads what a leader's metrics f say of its snapshots sent
// to the member to.
func SnapshotSent(f metrics.Families, to uint64) Transfer {
	return transfer(f, SnapshotSendMetric, "To", to)
}

// SnapshotReceived reads what a member's metrics f say of the snapshots
// it received from the member from.
func SnapshotReceived(f metrics.Families, from uint64) Transfer {
	t := transfer(f, SnapshotReceiveMetric, "From", from)
	if h, err := metrics.HistogramOf(f, SnapshotDBFsyncMetric); err == nil {
		t.Fsync = h.Sum
	}
	return t
}

// transfer reads the histogram name and the send failures for the
// member id in label; a metric etcd has not shown yet (no snapshot yet)
// reads as zero.
func transfer(f metrics.Families, name, label string, id uint64) Transfer {
	var t Transfer
	key := strconv.FormatUint(id, 16) // etcd's types.ID.String
	if hs, err := metrics.HistogramsBy(f, name, label); err == nil {
		t.Seconds, t.Count = hs[key].Sum, hs[key].Count
	}
	if n, err := metrics.ValuesBy(f, SnapshotSendFailuresMetric, label); err == nil && label == "To" {
		t.Failures = n[key]
	}
	return t
}

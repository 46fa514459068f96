package verdict

import "time"

// NetworkThresholds are what a network between members is judged
// against (`etcdbench net`).
type NetworkThresholds struct {
	RTTP99 Threshold // the round trip p99 between two members
	// Margin WARNs a p99 that passes within this fraction under RTTP99.
	Margin Threshold
	// SnapshotBandwidth is the stream rate a member recovers from a
	// snapshot at (hardware.md's recovery bandwidth).
	SnapshotBandwidth Threshold
}

// NetworkDefaults are OpenShift's round-trip rule and etcd's recovery
// bandwidth.
func NetworkDefaults() NetworkThresholds {
	return NetworkThresholds{
		RTTP99: Threshold{
			ID: "peer_rtt_p99", Title: "round trip p99 between members", Limit: (50 * time.Millisecond).Seconds(), Unit: "s",
			Source: "OpenShift etcd guidance: peer round trip p99 under 50 ms (with its 100 ms heartbeat); etcd's alert etcdMemberCommunicationSlow fires at 150 ms",
		},
		Margin: Threshold{
			ID: "peer_rtt_p99_margin", Title: "round trip p99 headroom", Limit: 0.20, Unit: "ratio",
			Source: "etcdbench: a p99 just under the limit leaves a busy network no room",
		},
		SnapshotBandwidth: Threshold{
			ID: "snapshot_bandwidth", Title: "stream bandwidth for a snapshot", Limit: 10e6, Unit: "B/s",
			Source: "etcd op-guide/hardware.md: 10 MB/s recovers 100 MB in 15 s",
		},
	}
}

// Timeouts are the heartbeat interval and election timeout etcd's tuning
// guide gives for members rtt apart: a heartbeat near the largest round
// trip, never under etcd's default 100 ms, and an election timeout of
// ten round trips, at least five heartbeats (etcd refuses fewer) and
// never under its default 1 s; each rounded up to 10 ms and 100 ms.
func Timeouts(rtt time.Duration) (heartbeat, election time.Duration) {
	heartbeat = max(100*time.Millisecond, roundUp(rtt, 10*time.Millisecond))
	election = max(time.Second, roundUp(10*rtt, 100*time.Millisecond), roundUp(5*heartbeat, 100*time.Millisecond))
	return heartbeat, election
}

func roundUp(d, to time.Duration) time.Duration { return (d + to - 1) / to * to }

// TimeoutsSource says where Timeouts' rules come from.
const TimeoutsSource = "etcd docs tuning.md (heartbeat near the round trip between members, election timeout about 10x it); etcd refuses an election timeout under 5 heartbeats; OpenShift's profiles 100/1000 ms and 500/2500 ms"

package verdict

import (
	"fmt"
	"time"
)

// DrillThresholds are what a fault's cost, as clients saw it, is judged
// against: what Kubernetes builds on etcd's writes.
type DrillThresholds struct {
	// RenewDeadline is how long kube-controller-manager's and
	// kube-scheduler's leaders may fail to renew their lease before they
	// give up leading; LeaseDuration how long until another takes it.
	RenewDeadline, LeaseDuration Threshold
	// NodeLease is how long a node's lease lasts before the node is
	// marked NotReady and its pods evicted.
	NodeLease Threshold
	// MutatingP99 is the apiserver's SLO for mutating requests.
	MutatingP99 Threshold
}

// DrillDefaults are Kubernetes' defaults.
func DrillDefaults() DrillThresholds {
	const leaderElection = "kube-controller-manager and kube-scheduler --leader-elect-lease-duration 15s, --leader-elect-renew-deadline 10s (component-base LeaderElectionConfiguration defaults)"
	return DrillThresholds{
		RenewDeadline: Threshold{ID: "outage_renew_deadline", Title: "write outage against the leader-election renew deadline",
			Limit: (10 * time.Second).Seconds(), Unit: "s", Source: leaderElection},
		LeaseDuration: Threshold{ID: "outage_lease_duration", Title: "write outage against the leader-election lease",
			Limit: (15 * time.Second).Seconds(), Unit: "s", Source: leaderElection},
		NodeLease: Threshold{ID: "outage_node_lease", Title: "write outage against a node's lease",
			Limit: (40 * time.Second).Seconds(), Unit: "s", Source: "kubelet nodeLeaseDurationSeconds 40 (the node controller marks a node NotReady once its lease is that old)"},
		MutatingP99: Threshold{ID: "put_p99_during_fault", Title: "put p99 during the fault",
			Limit: time.Second.Seconds(), Unit: "s", Source: "Kubernetes API call latency SLO: mutating requests p99 <= 1 s (sig-scalability slos/api_call_latency.md)"},
	}
}

// DrillFigures are one fault's costs.
type DrillFigures struct {
	Outage, P99During time.Duration
	// NewLeader is the time to a new leader (0: the leader kept its
	// place), Election and RTT the cluster's election timeout and its
	// largest round trip between members.
	NewLeader, Election, RTT time.Duration
}

// ExpectedNewLeader is how soon etcd's raft is expected to elect after
// losing its leader: a follower campaigns within two election timeouts
// of the last heartbeat (its timeout is randomized over [1, 2) of it),
// and the vote takes a round trip.
func ExpectedNewLeader(election, rtt time.Duration) time.Duration { return 2*election + rtt }

// JudgeDrill judges a fault's costs: the outage against each lease that
// depends on writes, the p99 during it against the apiserver's SLO, and
// the time to a new leader against raft's expectation.
func JudgeDrill(t DrillThresholds, f DrillFigures) []Verdict {
	vs := []Verdict{
		judgeAtMost(t.RenewDeadline, f.Outage, "writes stopped for %v", "controllers and schedulers lose their leadership and restart; shorten the outage (see the findings) or lengthen --leader-elect-renew-deadline"),
		judgeAtMost(t.LeaseDuration, f.Outage, "writes stopped for %v", "another instance takes over only after the lease; the components were without a leader"),
		judgeAtMost(t.NodeLease, f.Outage, "writes stopped for %v", "nodes are marked NotReady and their pods evicted"),
		judgeAtMost(t.MutatingP99, f.P99During, "puts took %v at the p99 during the fault", "the apiserver's writes miss their SLO while it lasts"),
	}
	if f.NewLeader > 0 {
		want := ExpectedNewLeader(f.Election, f.RTT)
		th := Threshold{ID: "new_leader", Title: "time to a new leader", Limit: want.Seconds(), Unit: "s",
			Source: fmt.Sprintf("etcd raft: a follower campaigns within 2 x its %v election timeout of the last heartbeat, and the vote takes a %v round trip", f.Election, f.RTT)}
		vs = append(vs, judgeAtMost(th, f.NewLeader, "a new leader after %v", "more than one election was needed (split votes, or a member that could not vote): see the terms the fault cost"))
	}
	return vs
}

package cluster

import (
	"crypto/tls"
	"net/http"
	"time"

	"etcdbench/internal/verdict"
)

// Config is one validated `diagnose --endpoints`.
type Config struct {
	// Endpoints are the members' client URLs, with their scheme.
	Endpoints []string
	// TLS is the client configuration for https:// endpoints (nil: none).
	TLS *tls.Config
	// HTTP reads /version and /metrics (with TLS when it is set).
	HTTP *http.Client
	// Window is the time between the two /metrics scrapes.
	Window time.Duration
	// Timeout bounds every call to one member.
	Timeout time.Duration
	// Reads is the number of reads of each consistency per member.
	Reads int
	// Thresholds are the cluster rules' limits (nil: DefaultThresholds).
	Thresholds *Thresholds
	// Logs is an etcd log to run diagnose's log rules over ("": none).
	Logs string
	// Args is the command line, for the result.
	Args []string
}

// DefaultTimeout is the per-member deadline of every call when none is
// given: etcdctl's --command-timeout.
const DefaultTimeout = 5 * time.Second

// DefaultReads is how many reads of each consistency each member serves.
const DefaultReads = 200

// Thresholds are the limits of the cluster rules, with their sources.
type Thresholds struct {
	// Lag is how many raft entries a member may have applied fewer than
	// the leader has committed.
	Lag verdict.Threshold
	// ReadP99 is the linearizable read p99 above which a member serves
	// reads slowly.
	ReadP99 verdict.Threshold
	// ReadRatio is how many times slower than the fastest member's a
	// member's linearizable read p99 may be (above ReadFloor).
	ReadRatio verdict.Threshold
	// ReadFloor is the p99 under which no member is called slow.
	ReadFloor verdict.Threshold
	// MinorSkew is how many minor versions members may be apart.
	MinorSkew verdict.Threshold
	// MemoryShare is the share of its memory limit a member's resident
	// memory may reach.
	MemoryShare verdict.Threshold
}

// DefaultThresholds are the documented limits (docs/diagnose.md).
func DefaultThresholds() Thresholds {
	return Thresholds{
		MemoryShare: verdict.Threshold{
			ID: "memory_limit_share", Title: "resident memory / the member's memory limit", Limit: 0.8, Unit: "ratio",
			Source: "etcdbench: past its limit the kernel OOM-kills the member, and a full LIST adds more than the bytes it returns (diagnose data's list-memory): a fifth of the limit is little room for one",
		},
		Lag: verdict.Threshold{
			ID: "raft_lag", Title: "raft entries behind the leader", Limit: 5000, Unit: "count",
			Source: "etcd server/etcdserver/server.go maxGapBetweenApplyAndCommitIndex (5000): past it a member refuses requests with \"too many requests\"",
		},
		ReadP99: verdict.Threshold{
			ID: "read_linearizable_p99", Title: "linearizable read p99", Limit: 0.1, Unit: "s",
			Source: "etcd's expensive-request warning (100 ms, --warning-apply-duration): a small read should take a fraction of it",
		},
		ReadRatio: verdict.Threshold{
			ID: "read_p99_ratio", Title: "read p99 / the fastest member's", Limit: 5, Unit: "ratio",
			Source: "etcdbench: members of one cluster serve the same small read through the same leader; five times the fastest is one member's own trouble",
		},
		ReadFloor: verdict.Threshold{
			ID: "read_p99_floor", Title: "read p99 under which no member is slow", Limit: 0.05, Unit: "s",
			Source: "etcdbench: under half the 100 ms warning a read is fast enough whatever the others do (a busy machine's scheduling hiccups stay under it)",
		},
		MinorSkew: verdict.Threshold{
			ID: "version_minor_skew", Title: "minor versions between members", Limit: 2, Unit: "count",
			Source: "etcd upgrade guides: members may run adjacent minor versions only while a cluster is upgraded, one minor version at a time",
		},
	}
}

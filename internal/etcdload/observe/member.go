package observe

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"time"

	"etcdbench/internal/etcdload/metrics"
)

// The metrics a member is observed by.
const (
	// etcd's disk histograms (buckets ExponentialBuckets(0.001, 2, 14): 1
	// ms to 8.192 s, doubling).
	WALFsyncMetric      = "etcd_disk_wal_fsync_duration_seconds"
	BackendCommitMetric = "etcd_disk_backend_commit_duration_seconds"

	ApplyMetric         = "etcd_server_apply_duration_seconds"
	SlowApplyMetric     = "etcd_server_slow_apply_total"
	LeaderChangesMetric = "etcd_server_leader_changes_seen_total"
	// LateHeartbeatsMetric counts the heartbeats a leader sent later than
	// twice the heartbeat interval (etcd's warning "leader failed to send
	// out heartbeat on time").
	LateHeartbeatsMetric = "etcd_server_heartbeat_send_failures_total"
	DBSizeMetric         = "etcd_mvcc_db_total_size_in_bytes"
	PeerRTTMetric        = "etcd_network_peer_round_trip_time_seconds"

	// ProcessCPUMetric is the Prometheus client's CPU time of the
	// member's process (user and system, from /proc/self/stat).
	ProcessCPUMetric = "process_cpu_seconds_total"
	// GOMAXPROCSMetric is the Go runtime's GOMAXPROCS: the CPUs the
	// member can run on at once.
	GOMAXPROCSMetric = "go_sched_gomaxprocs_threads"
	// ProposalsPendingMetric counts requests this member proposed and has
	// not yet applied (a gauge).
	ProposalsPendingMetric = "etcd_server_proposals_pending"
	// ProposalsCommittedMetric and ProposalsAppliedMetric are the raft
	// commit and apply indexes (gauges, despite "_total"): their gap is
	// what is committed and waits for the apply loop.
	ProposalsCommittedMetric = "etcd_server_proposals_committed_total"
	ProposalsAppliedMetric   = "etcd_server_proposals_applied_total"
)

// Member is what one member's /metrics recorded during a load: the
// difference of a scrape after it and one before, and the largest
// backlog sampled in between. A figure the member does not expose (or
// that appears only once used) is NaN.
type Member struct {
	Target        Target
	WALFsync      metrics.Histogram
	BackendCommit metrics.Histogram
	// ApplyP99 and PeerRTTP99 are in seconds (etcd's histograms, 0.1 ms
	// buckets at the bottom).
	ApplyP99, PeerRTTP99 float64
	// LeaderChanges, SlowApplies and LateHeartbeats count what happened
	// during the load.
	LeaderChanges, SlowApplies, LateHeartbeats float64
	// DBSize is the backend database file's size after the load, bytes.
	DBSize float64
	// CPU is the CPUs the member's process used between the scrapes;
	// Cores its GOMAXPROCS.
	CPU, Cores float64
	// Backlog is the largest proposal backlog sampled during the load.
	Backlog Backlog
}

// Backlog is the largest proposal backlog a member's samples showed;
// Samples 0: not sampled.
type Backlog struct {
	// Pending is the most requests proposed and not yet applied.
	Pending float64
	// Unapplied is the most entries committed and not yet applied.
	Unapplied float64
	Samples   int
}

// WALFsyncP and BackendCommitP are the quantile q (0..1) of the disk
// histograms in seconds, interpolated as histogram_quantile does; NaN
// when the histogram is empty.
func (m Member) WALFsyncP(q float64) float64      { return metrics.Quantile(q, m.WALFsync) }
func (m Member) BackendCommitP(q float64) float64 { return metrics.Quantile(q, m.BackendCommit) }

// observeOthers reads the optional metrics of one member, whose scrapes
// were window apart.
func observeOthers(m *Member, before, after metrics.Families, window time.Duration) {
	m.ApplyP99, m.PeerRTTP99, m.LeaderChanges, m.SlowApplies, m.LateHeartbeats = math.NaN(), math.NaN(), math.NaN(), math.NaN(), math.NaN()
	m.DBSize, m.CPU, m.Cores = math.NaN(), math.NaN(), math.NaN()
	counter := func(metric string) float64 {
		b, berr := metrics.ValueOf(before, metric)
		a, aerr := metrics.ValueOf(after, metric)
		if berr == nil && aerr == nil && a >= b {
			return a - b
		}
		return math.NaN()
	}
	if cpu := counter(ProcessCPUMetric); !math.IsNaN(cpu) && window > 0 {
		m.CPU = cpu / window.Seconds()
	}
	if v, err := metrics.ValueOf(after, GOMAXPROCSMetric); err == nil && v > 0 {
		m.Cores = v
	}
	m.SlowApplies, m.LeaderChanges, m.LateHeartbeats = counter(SlowApplyMetric), counter(LeaderChangesMetric), counter(LateHeartbeatsMetric)
	if v, err := metrics.ValueOf(after, DBSizeMetric); err == nil {
		m.DBSize = v
	}
	for _, c := range []struct {
		metric string
		dst    *float64
	}{{ApplyMetric, &m.ApplyP99}, {PeerRTTMetric, &m.PeerRTTP99}} {
		if h, ok := metrics.HistogramDelta(before, after, c.metric); ok {
			*c.dst = metrics.Quantile(0.99, h)
		}
	}
}

// scraped is one target's /metrics and when it was read: the middle of
// the request, when the member's handler ran.
type scraped struct {
	f  metrics.Families
	at time.Time
}

// scrapeAll scrapes every target.
func scrapeAll(ctx context.Context, client *http.Client, ts []Target) ([]scraped, error) {
	out := make([]scraped, len(ts))
	for i, t := range ts {
		sent := time.Now()
		f, err := metrics.Scrape(ctx, client, t.URL)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", t.Name, err)
		}
		out[i] = scraped{f: f, at: sent.Add(time.Since(sent) / 2)}
	}
	return out, nil
}

// deltas subtracts the before scrapes from the after scrapes.
func deltas(ts []Target, befores, afters []scraped) ([]Member, error) {
	var out []Member
	for i, t := range ts {
		before, after := befores[i].f, afters[i].f
		m := Member{Target: t}
		observeOthers(&m, before, after, afters[i].at.Sub(befores[i].at))
		for _, h := range []struct {
			name string
			dst  *metrics.Histogram
		}{{WALFsyncMetric, &m.WALFsync}, {BackendCommitMetric, &m.BackendCommit}} {
			b, err := metrics.HistogramOf(before, h.name)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", t.Name, err)
			}
			a, err := metrics.HistogramOf(after, h.name)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", t.Name, err)
			}
			if *h.dst, err = metrics.Delta(b, a); err != nil {
				return nil, fmt.Errorf("%s %s: %w", t.Name, h.name, err)
			}
		}
		out = append(out, m)
	}
	return out, nil
}

package diagnose

import (
	"fmt"
	"math"
	"sort"
	"time"

	"etcdbench/internal/etcdload/metrics"
)

// The metrics the evidence reads (names as etcd 3.4-3.7 expose them).
const (
	mWALFsync        = "etcd_disk_wal_fsync_duration_seconds"
	mBackendCommit   = "etcd_disk_backend_commit_duration_seconds"
	mApply           = "etcd_server_apply_duration_seconds"
	mSlowApplies     = "etcd_server_slow_apply_total"
	mHeartbeatFail   = "etcd_server_heartbeat_send_failures_total"
	mLeaderChanges   = "etcd_server_leader_changes_seen_total"
	mHasLeader       = "etcd_server_has_leader"
	mIsLeader        = "etcd_server_is_leader"
	mPropFailed      = "etcd_server_proposals_failed_total"
	mPropCommitted   = "etcd_server_proposals_committed_total"
	mPropPending     = "etcd_server_proposals_pending"
	mPeerRTT         = "etcd_network_peer_round_trip_time_seconds"
	mDBSize          = "etcd_mvcc_db_total_size_in_bytes"
	mDBInUse         = "etcd_mvcc_db_total_size_in_use_in_bytes"
	mQuota           = "etcd_server_quota_backend_bytes"
	mCPU             = "process_cpu_seconds_total"
	mResident        = "process_resident_memory_bytes"
	mGC              = "go_gc_duration_seconds"
	mGOMAXPROCS      = "go_sched_gomaxprocs_threads"
	mGRPCHandled     = "grpc_server_handled_total"
	mVersion         = "etcd_server_version"
	mCompactPause    = "etcd_debugging_mvcc_db_compaction_pause_duration_milliseconds"
	mDefrag          = "etcd_disk_backend_defrag_duration_seconds"
	labelPeer        = "To"
	labelGRPCCode    = "grpc_code"
	labelVersion     = "server_version"
	windowSinceStart = 0
)

// grpcErrorCodes are the codes etcd's alerts count as failures
// (contrib/mixin etcdHighNumberOfFailedGRPCRequests); NotFound,
// Canceled and the like are the client's business.
var grpcErrorCodes = []string{"Unknown", "FailedPrecondition", "ResourceExhausted", "Internal", "Unavailable", "DataLoss", "DeadlineExceeded"}

// Quantiles summarise one latency histogram over the window. P50 and P99
// are NaN when it has no observations.
type Quantiles struct {
	P50, P99, Count float64
}

func quantiles(h metrics.Histogram) Quantiles {
	return Quantiles{P50: metrics.Quantile(0.5, h), P99: metrics.Quantile(0.99, h), Count: h.Count}
}

// noData is a Quantiles for a metric the member does not expose.
var noData = Quantiles{P50: math.NaN(), P99: math.NaN(), Count: math.NaN()}

// Member is what one member's metrics say about the window. Every number
// is NaN when the member does not expose it (etcd 3.4 has no apply
// histogram; a single member has no peers).
type Member struct {
	Name    string // member0, member1... in the order given
	Source  string // URL or file it came from
	Version string // etcd's server_version label, when exposed

	WALFsync, BackendCommit, Apply Quantiles

	// Increases of counters over the window.
	SlowApplies, HeartbeatFailures, LeaderChanges float64
	ProposalsFailed, ProposalsCommitted           float64

	// Gauges at the end of the window.
	ProposalsPending, HasLeader, IsLeader float64

	// PeerRTTP99 is the round-trip time p99 to each peer (by member ID),
	// and PeerRTTCount the round trips measured.
	PeerRTTP99, PeerRTTCount map[string]float64

	DBSize, DBInUse, Quota float64 // bytes, at the end of the window

	CPUSeconds float64 // process CPU over the window
	Cores      float64 // GOMAXPROCS when exposed, else the cores assumed
	CoresFrom  string  // where Cores came from
	Resident   float64 // resident memory, bytes
	GCs        float64 // Go garbage collections over the window
	GCSeconds  float64 // their total stop-the-world pauses

	// CompactionPauseP99 is the p99 of the pauses compaction makes
	// between its batches, in seconds; Defrags counts defragmentations
	// (each blocks the member while it rewrites the db).
	CompactionPauseP99, Defrags float64

	// GRPCByCode counts handled gRPC requests over the window by code.
	GRPCByCode map[string]float64
}

// CPUBusy is the process's CPU per core over window (NaN without one).
func (m Member) CPUBusy(window time.Duration) float64 {
	if window <= 0 || math.IsNaN(m.CPUSeconds) || !(m.Cores > 0) {
		return math.NaN()
	}
	return m.CPUSeconds / window.Seconds() / m.Cores
}

// GRPCErrors returns the failed and all handled gRPC requests.
func (m Member) GRPCErrors() (failed, total float64) {
	for code, n := range m.GRPCByCode {
		total += n
		for _, c := range grpcErrorCodes {
			if code == c {
				failed += n
			}
		}
	}
	return failed, total
}

// Evidence is everything the rules read.
type Evidence struct {
	Members []Member
	// Window is the time between the two scrapes; 0 means each member's
	// figures count since its process started (one saved scrape).
	Window time.Duration
	// Logs is what the logs said, when logs were read.
	Logs *LogSummary
	// Notes say what is missing or assumed.
	Notes []string
}

// SinceStart reports whether the figures count since process start.
func (e Evidence) SinceStart() bool { return e.Window == windowSinceStart }

// Scrape is one member's parsed /metrics with where it came from.
type Scrape struct {
	Name, Source string
	Families     metrics.Families
}

// EvidenceFromMetrics builds a member's evidence from two scrapes taken
// window apart (before nil: after alone, counting since the process
// started). cores is assumed when the member does not expose GOMAXPROCS.
// It returns notes on what was missing or reset.
func EvidenceFromMetrics(before *Scrape, after Scrape, window time.Duration, cores float64) (Member, []string) {
	var b metrics.Families
	if before != nil {
		b = before.Families
	} else {
		b = metrics.Families{}
	}
	a := after.Families
	m := Member{Name: after.Name, Source: after.Source}
	var notes []string
	note := func(format string, args ...any) {
		notes = append(notes, after.Name+": "+fmt.Sprintf(format, args...))
	}
	hist := func(name string) Quantiles {
		if _, ok := a[name]; !ok {
			return noData
		}
		h, ok := metrics.HistogramDelta(b, a, name)
		if !ok {
			note("%s did not subtract (member restarted between the scrapes?)", name)
			return noData
		}
		return quantiles(h)
	}
	m.WALFsync, m.BackendCommit, m.Apply = hist(mWALFsync), hist(mBackendCommit), hist(mApply)
	// etcd counts compaction pauses in milliseconds.
	m.CompactionPauseP99 = hist(mCompactPause).P99 / 1000
	m.Defrags = hist(mDefrag).Count
	increase := func(name string) float64 {
		av, err := metrics.ValueOf(a, name)
		if err != nil {
			return math.NaN()
		}
		bv, err := metrics.ValueOf(b, name)
		if err != nil {
			bv = 0 // created on first use: counts from zero
		}
		if av < bv {
			note("%s went down from %g to %g (member restarted between the scrapes?)", name, bv, av)
			return math.NaN()
		}
		return av - bv
	}
	m.SlowApplies, m.HeartbeatFailures, m.LeaderChanges = increase(mSlowApplies), increase(mHeartbeatFail), increase(mLeaderChanges)
	m.ProposalsFailed, m.ProposalsCommitted = increase(mPropFailed), increase(mPropCommitted)
	m.CPUSeconds = increase(mCPU)
	gauge := func(name string) float64 {
		v, err := metrics.ValueOf(a, name)
		if err != nil {
			return math.NaN()
		}
		return v
	}
	m.ProposalsPending, m.HasLeader, m.IsLeader = gauge(mPropPending), gauge(mHasLeader), gauge(mIsLeader)
	m.DBSize, m.DBInUse, m.Quota, m.Resident = gauge(mDBSize), gauge(mDBInUse), gauge(mQuota), gauge(mResident)
	m.Cores, m.CoresFrom = gauge(mGOMAXPROCS), "GOMAXPROCS ("+mGOMAXPROCS+")"
	if math.IsNaN(m.Cores) {
		m.Cores, m.CoresFrom = cores, fmt.Sprintf("assumed %g (this machine's CPUs; the member does not expose GOMAXPROCS)", cores)
	}
	m.GCs, m.GCSeconds = math.NaN(), math.NaN()
	if n, s, err := metrics.SummaryCount(a, mGC); err == nil {
		bn, bs, berr := metrics.SummaryCount(b, mGC)
		if berr != nil {
			bn, bs = 0, 0
		}
		if n >= bn {
			m.GCs, m.GCSeconds = n-bn, s-bs
		}
	}
	if v, err := metrics.ValuesBy(a, mVersion, labelVersion); err == nil {
		for k := range v {
			m.Version = k
		}
	}
	if rtt, err := metrics.HistogramDeltaBy(b, a, mPeerRTT, labelPeer); err == nil {
		m.PeerRTTP99, m.PeerRTTCount = map[string]float64{}, map[string]float64{}
		for peer, h := range rtt {
			m.PeerRTTP99[peer], m.PeerRTTCount[peer] = metrics.Quantile(0.99, h), h.Count
		}
	}
	if d, reset, err := metrics.DeltaBy(b, a, mGRPCHandled, labelGRPCCode); err == nil {
		m.GRPCByCode = d
		if len(reset) > 0 {
			note("%s went down for codes %v (member restarted between the scrapes?)", mGRPCHandled, reset)
		}
	}
	if _, ok := a[mWALFsync]; !ok {
		note("no %s: is this etcd's /metrics?", mWALFsync)
	}
	return m, notes
}

// sortedKeys returns m's keys in order, for stable output.
func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

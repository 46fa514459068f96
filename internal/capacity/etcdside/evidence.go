package etcdside

import (
	"fmt"
	"math"
	"time"

	"etcdbench/internal/etcdload"
	"etcdbench/internal/etcdload/observe"
	"etcdbench/internal/result"
	"etcdbench/internal/trace"
	"etcdbench/internal/units"
	"etcdbench/internal/verdict"
)

// StepEvidence is what one `etcd capacity` step measured beyond its
// point of the curve, typed: what tells which resource limits etcd at
// its rate. A figure not measured is NaN (a nil Host: the machine's CPU
// not read).
type StepEvidence struct {
	// Failed is the id of the step's first failed rule, "" when none
	// failed.
	Failed string
	// WAL and Commit are the worst member's WAL fsync and backend commit
	// p99 (etcd's histograms; 0 without observations).
	WAL, Commit time.Duration
	// SyncsPerSec and PerSync are the busiest member's WAL fsyncs per
	// second and puts per fsync.
	SyncsPerSec, PerSync float64
	// LeaderChanges is the most leader changes a member saw (0 when none
	// counts them); SlowApplies the most applies over 100 ms.
	LeaderChanges, SlowApplies float64
	// ClientCPU is the CPUs the load generator (this process) used.
	ClientCPU float64
	// Host is how busy the machine the load generator runs on was.
	Host *observe.Host
	// Members are each member's CPUs used, in member order.
	Members []MemberCPU
	// Cores is the fewest CPUs a member runs on at once (GOMAXPROCS).
	Cores float64
	// Pending and Unapplied are the largest proposal backlog any member
	// had in a sample (NaN: not sampled).
	Pending, Unapplied float64
	// PeerRTT is the worst member's peer round trip p99, seconds.
	PeerRTT float64
	// RequestP50 is the puts' median latency from their due time, and
	// WALP50 the worst member's WAL fsync median (0: none observed).
	RequestP50, WALP50 time.Duration
	// Clients is how many clients sent the step's puts, each waiting for
	// its answer before the next (0: not known).
	Clients int
	// Traced and TracedNoWait are the eBPF-traced WAL sync p99 of a
	// single embedded member, with and without its waits for a CPU
	// (seconds; NaN: not traced); TracedSyncs how many syncs were traced.
	Traced, TracedNoWait float64
	TracedSyncs          int64
}

// MemberCPU is one member's CPUs used during a step.
type MemberCPU struct {
	Name string
	CPUs float64
}

// stepOf turns one step's check into a point of the curve and its
// evidence: the put latency from the due time as the commit latency,
// the members' own WAL fsync p50/p99 (the worst member's) as the sync
// latency.
func stepOf(out *etcdload.Outcome) (result.CapacityStep, StepEvidence) {
	w := out.Workload
	s := result.CapacityStep{Achieved: w.OpsPerSec, DurationNs: w.DurationNs, Decided: true}
	if l := out.Request; l != nil {
		s.CommitP50Ns, _ = l.At(50)
		s.CommitP99Ns, _ = l.At(99)
	}
	nan := math.NaN()
	e := StepEvidence{SlowApplies: nan, ClientCPU: nan, Host: out.Host, Cores: nan, Pending: nan, Unapplied: nan, PeerRTT: nan, Traced: nan, TracedNoWait: nan}
	// worst keeps the largest of the values measured.
	worst := func(dst *float64, v float64) {
		if !math.IsNaN(v) && (math.IsNaN(*dst) || v > *dst) {
			*dst = v
		}
	}
	walP50, walP99, commit := 0.0, 0.0, 0.0
	for _, m := range out.Members {
		worst(&walP50, m.WALFsyncP(0.5))
		worst(&walP99, m.WALFsyncP(0.99))
		worst(&commit, m.BackendCommitP(0.99))
		s.Syncs = max(s.Syncs, int64(m.WALFsync.Count))
		worst(&e.LeaderChanges, m.LeaderChanges)
		worst(&e.SlowApplies, m.SlowApplies)
		if !math.IsNaN(m.CPU) {
			e.Members = append(e.Members, MemberCPU{Name: m.Target.Name, CPUs: m.CPU})
		}
		if !math.IsNaN(m.Cores) && (math.IsNaN(e.Cores) || m.Cores < e.Cores) {
			e.Cores = m.Cores
		}
		if m.Backlog.Samples > 0 {
			worst(&e.Pending, m.Backlog.Pending)
			worst(&e.Unapplied, m.Backlog.Unapplied)
		}
		worst(&e.PeerRTT, m.PeerRTTP99)
	}
	s.SyncP50Ns, s.SyncP99Ns = units.FromSeconds(walP50).Nanoseconds(), units.FromSeconds(walP99).Nanoseconds()
	e.WAL, e.Commit = time.Duration(s.SyncP99Ns), units.FromSeconds(commit)
	e.RequestP50, e.WALP50 = time.Duration(s.CommitP50Ns), time.Duration(s.SyncP50Ns)
	if secs := time.Duration(w.DurationNs).Seconds(); secs > 0 {
		s.SyncsPerSec = float64(s.Syncs) / secs
	}
	if s.Syncs > 0 {
		s.EntriesPerSync = float64(w.Ops) / float64(s.Syncs)
	}
	e.SyncsPerSec, e.PerSync = s.SyncsPerSec, s.EntriesPerSync
	if p := w.Process; p != nil && w.DurationNs > 0 {
		e.ClientCPU = float64(p.UserNs+p.SystemNs) / float64(w.DurationNs)
	}
	for _, v := range w.Verdicts {
		s.Status = max(s.Status, v.Status)
		if v.Status == verdict.Fail && s.Failed == "" {
			s.Failed = v.Check + ": " + v.Title + ": " + v.Detail
			e.Failed = v.Check
		}
	}
	return s, e
}

// addTrace adds a traced member's WAL syncs to the evidence (none: nil).
func (e *StepEvidence) addTrace(s *trace.WALSyncs) {
	if s == nil {
		return
	}
	if p99, ok := s.P99(); ok {
		e.Traced, e.TracedSyncs = p99.Seconds(), s.Count()
	}
	if p99, ok := s.P99WithoutCPUWait(); ok {
		e.TracedNoWait = p99.Seconds()
	}
}

// Figures are the evidence as a step's extra figures, the one place
// their names are made: the worst member's backend commit p99, leader
// changes, slow applies, proposal backlog and peer round trip; each
// member's CPU and the fewest cores of any; the load generator's CPU and
// the machine's; the traced syncs. A figure not measured is left out.
func (e StepEvidence) Figures() []result.Figure {
	var out []result.Figure
	add := func(name string, v float64, unit, what string) {
		if !math.IsNaN(v) {
			out = append(out, result.Figure{Name: name, Value: v, Unit: unit, Description: what})
		}
	}
	add(backendCommitFigure, e.Commit.Seconds(), "s", "the worst member's backend commit p99 (etcd's histogram)")
	add("leader_changes", e.LeaderChanges, "count", "leader changes a member saw during the step")
	add("slow_applies", e.SlowApplies, "count", "the most applies over 100 ms a member counted during the step")
	add("client_cpu", e.ClientCPU, "x", "CPUs the load generator used (etcdbench's own process, getrusage over the timed load)")
	out = append(out, observe.HostFigures(e.Host)...)
	for _, m := range e.Members {
		add(m.Name+"_cpu", m.CPUs, "x", "CPUs the member's process used during the step (process_cpu_seconds_total)")
	}
	add("member_cores", e.Cores, "count", "CPUs a member runs on at once (its GOMAXPROCS), the fewest of any member")
	if !math.IsNaN(e.Pending) {
		add("proposals_pending_max", e.Pending, "count", "the most proposals a member had pending in a sample during the step (etcd_server_proposals_pending)")
		add("proposals_unapplied_max", e.Unapplied, "count", "the most entries a member had committed but not applied in a sample during the step")
	}
	add("peer_rtt_p99", e.PeerRTT, "s", "the worst member's peer round trip p99 during the step (etcd observes it every 30 s, so a short step may have none)")
	add("traced_wal_sync_p99", e.Traced, "s", fmt.Sprintf("the member's WAL fdatasync p99, timed by eBPF in the kernel (%d syncs)", e.TracedSyncs))
	add("traced_wal_sync_no_cpu_wait_p99", e.TracedNoWait, "s", "the same syncs without the time their thread waited for a CPU: the disk's and the filesystem's own time")
	return out
}

// sampleEvery is how often an `etcd capacity` step of length step reads
// the members' proposal backlog: five times a step, at most once a
// second (each read is a scrape of every member by the load generator
// while it sends) and at least every 200 ms.
func sampleEvery(step time.Duration) time.Duration {
	return min(max(step/5, 200*time.Millisecond), time.Second)
}

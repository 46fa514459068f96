package etcdside

import (
	"fmt"
	"math"
	"strings"
	"time"

	"etcdbench/internal/capacity/sweep"
	"etcdbench/internal/etcdcluster"
	"etcdbench/internal/finding"
	"etcdbench/internal/result"
	"etcdbench/internal/units"
	"etcdbench/internal/verdict"
)

// LimitThresholds are where `etcd capacity` calls a resource the limit.
type LimitThresholds struct {
	// HostBusy is the share of the machine's CPU time busy over a step
	// at which its CPUs count as saturated.
	HostBusy verdict.Threshold
	// MemberCPU is a member's CPUs used over its cores (GOMAXPROCS).
	MemberCPU verdict.Threshold
	// PeerRTT is the peer round trip p99 over the heartbeat interval.
	PeerRTT verdict.Threshold
	// Pending is the most proposals a member had waiting.
	Pending verdict.Threshold
	// Unapplied is the most committed entries waiting for the apply loop.
	Unapplied verdict.Threshold
}

// LimitDefaults returns the thresholds `etcd capacity` uses.
func LimitDefaults() LimitThresholds {
	d := verdict.DiagnoseDefaults()
	return LimitThresholds{
		HostBusy: verdict.Threshold{
			ID: "host_cpu_busy", Title: "machine CPU busy", Limit: 0.9, Unit: "ratio",
			Source: "etcdbench: with 90 % of the machine's CPU time busy over a step, etcd's goroutines (its raft loop, the return of its fdatasync) wait for a CPU, and etcd's WAL fsync histogram counts that wait as fsync time",
		},
		MemberCPU: d.CPUBusy,
		PeerRTT: verdict.Threshold{
			ID: "peer_rtt_heartbeat", Title: "peer round trip p99 / heartbeat interval", Limit: 0.5, Unit: "ratio",
			Source: "etcd op-guide/tuning.md: the heartbeat interval should be about 0.5-1.5x the members' round trip; a round trip over half the interval delays heartbeats and every replicated put",
		},
		Pending: d.ProposalsPending,
		Unapplied: verdict.Threshold{
			ID: "proposals_unapplied", Title: "committed entries not yet applied", Limit: 500, Unit: "count",
			Source: "etcd server/etcdserver/v3_server.go: proposals are refused with \"too many requests\" once 5000 committed entries wait for the apply loop (maxGapBetweenApplyAndCommitIndex); a tenth of that in a sample means apply does not keep up",
		},
	}
}

// limitContext is what the classification knows beyond the steps.
type limitContext struct {
	// embedded: the members run on this machine, so its CPUs are theirs.
	embedded bool
	// started: this process started the members, so their flags are
	// known (an external member found listening here is embedded, not
	// started).
	started bool
	// heartbeat is the members' heartbeat interval; heartbeatFrom says
	// where it comes from when it was not set.
	heartbeat     time.Duration
	heartbeatFrom string
	// peerRTT is the round trip the members were put apart by (0: none
	// given).
	peerRTT time.Duration
	th      LimitThresholds
	// stepFlag lengthens the steps of the command that runs the sweep.
	stepFlag string
}

// longerStep is the flag advice names to lengthen the steps.
func (lc limitContext) longerStep() string {
	if lc.stepFlag == "" {
		return "--step"
	}
	return lc.stepFlag
}

// The cases of a limit reached in more than one way.
const (
	// CaseTraced: the eBPF trace of the member's WAL syncs decided disk
	// against CPU.
	CaseTraced = "traced"
	// CaseMachine: the machine's CPUs were saturated (embedded members);
	// CaseMember: a member used its cores.
	CaseMachine = "machine"
	CaseMember  = "member"
)

// limitingResource names what limits etcd at the lowest failing rate,
// from that step's evidence (evs, one for each of c's steps) rather than
// only from the rule that failed, as a finding and in words.
func limitingResource(c *result.Capacity, evs []StepEvidence, lc limitContext) (finding.Finding, string) {
	fi := -1
	for i := range c.Steps {
		if s := &c.Steps[i]; sweep.Counted(*s) && sweep.Failed(*s) && (fi < 0 || s.Rate < c.Steps[fi].Rate) {
			fi = i
		}
	}
	if fi < 0 {
		return finding.Finding{Kind: finding.None}, "no step failed: the limit lies above the highest rate tried"
	}
	f := c.Steps[fi]
	lc = lc.withHeartbeat()
	lim := nameLimit(f, evs[fi], lc)
	words := limitWords(lim, f, evs[fi], lc)
	// A faster step that passed (the probe, often) says the failure was
	// a passing stall of the disk, the machine or a neighbour, not a
	// limit: the answer is that step's, and it says so.
	var above *result.CapacityStep
	for i := range c.Steps {
		if s := &c.Steps[i]; s.Rate > f.Rate && sweep.Passed(*s) && (above == nil || s.Rate > above.Rate) {
			above = s
		}
	}
	if above != nil {
		lim = lim.With(FactPassedAbove, above.Rate, "puts/s", 0)
		words += fmt.Sprintf(". But the step at %.0f puts/s passed (WAL fsync p99 %v): the failure at %.0f was transient, a stall rather than a limit; run again, or with a longer %s",
			above.Rate, time.Duration(above.SyncP99Ns).Round(time.Microsecond), f.Rate, lc.longerStep())
	}
	return lim, words
}

// FactPassedAbove is the fact of a limit whose failing step a faster
// step contradicts: that step's rate.
const FactPassedAbove = "faster_step_passed"

func (lc limitContext) withHeartbeat() limitContext {
	if lc.heartbeat == 0 {
		lc.heartbeat, lc.heartbeatFrom = etcdcluster.DefaultHeartbeat, " (etcd's default)"
		if !lc.started {
			lc.heartbeatFrom = " (etcd's default; the cluster's own is not known here)"
		}
	}
	return lc
}

// view is what the classification and its words derive from a step's
// evidence.
type view struct {
	hostSaturated bool
	member        string
	memberShare   float64
	behind        bool
	diskRule      bool
	walLimit      time.Duration
	// traced: the trace of the syncs is there to read for a WAL failure.
	traced bool
}

func (lc limitContext) view(e StepEvidence) view {
	th := lc.th
	v := view{
		hostSaturated: e.Host != nil && e.Host.Busy >= th.HostBusy.Limit,
		behind:        e.Pending >= th.Pending.Limit || e.Unapplied >= th.Unapplied.Limit,
		diskRule:      e.Failed == verdict.Defaults().WALFsyncP99.ID || e.Failed == verdict.Defaults().BackendCommitP99.ID,
		walLimit:      units.FromSeconds(verdict.Defaults().WALFsyncP99.Limit),
		traced:        e.Failed == verdict.Defaults().WALFsyncP99.ID && !math.IsNaN(e.TracedNoWait) && !math.IsNaN(e.Traced),
	}
	v.member, v.memberShare = e.busiestMember(lc.embedded)
	return v
}

// nameLimit names the resource that limits the failing step f, with
// the facts that decided it.
func nameLimit(f result.CapacityStep, e StepEvidence, lc limitContext) finding.Finding {
	th, v := lc.th, lc.view(e)
	d := verdict.Defaults()
	base := []finding.Fact{
		{Name: "rate", Value: f.Rate, Unit: "puts/s"},
		{Name: d.WALFsyncP99.ID, Value: e.WAL.Seconds(), Unit: "s", Limit: d.WALFsyncP99.Limit},
		{Name: d.BackendCommitP99.ID, Value: e.Commit.Seconds(), Unit: "s", Limit: d.BackendCommitP99.Limit},
	}
	at := func(k finding.Kind, c string, more ...finding.Fact) finding.Finding {
		return finding.Finding{Kind: k, Case: c, Facts: append(base, more...)}
	}
	if v.traced {
		// The most direct evidence: the kernel's own timing of the same
		// syncs, split into the disk's time and the wait for a CPU.
		traced := []finding.Fact{
			{Name: "traced_wal_sync_p99", Value: e.Traced, Unit: "s", Limit: v.walLimit.Seconds()},
			{Name: "traced_wal_sync_no_cpu_wait_p99", Value: e.TracedNoWait, Unit: "s", Limit: v.walLimit.Seconds()},
		}
		switch {
		case units.FromSeconds(e.TracedNoWait).Round(time.Microsecond) >= v.walLimit:
			return at(finding.Disk, CaseTraced, traced...)
		case units.FromSeconds(e.Traced).Round(time.Microsecond) >= v.walLimit:
			return at(finding.CPU, CaseTraced, traced...)
		}
		// The kernel timed the syncs under the limit, waits and all:
		// etcd's histogram read more (its 8-16 ms bucket is interpolated,
		// and it counts the Go runtime's delay after the call returns).
		// The other evidence decides; the words say the trace.
	}
	busy := finding.Fact{Name: "host_cpu_busy", Value: math.NaN(), Unit: "ratio", Limit: th.HostBusy.Limit}
	if e.Host != nil {
		busy.Value = e.Host.Busy
	}
	share := finding.Fact{Name: "member_cpu_share", Value: v.memberShare, Unit: "ratio", Limit: th.MemberCPU.Limit}
	backlog := []finding.Fact{
		{Name: "leader_changes", Value: e.LeaderChanges, Unit: "count"},
		{Name: "slow_applies", Value: e.SlowApplies, Unit: "count"},
		{Name: "proposals_pending_max", Value: e.Pending, Unit: "count", Limit: th.Pending.Limit},
		{Name: "proposals_unapplied_max", Value: e.Unapplied, Unit: "count", Limit: th.Unapplied.Limit},
	}
	rttLimit := th.PeerRTT.Limit * lc.heartbeat.Seconds()
	switch {
	case v.memberShare >= th.MemberCPU.Limit || v.hostSaturated && lc.embedded:
		if v.hostSaturated && lc.embedded {
			return at(finding.CPU, CaseMachine, busy)
		}
		return at(finding.CPU, CaseMember, share)
	case v.hostSaturated: // the load generator's machine, not the members'
		return at(finding.Client, "", busy)
	case v.diskRule:
		return at(finding.Disk, "", busy, share)
	case lc.roundTrip(e) > 0:
		rtt := lc.roundTrip(e)
		return at(finding.Network, CaseLatency,
			finding.Fact{Name: "request_p50", Value: e.RequestP50.Seconds(), Unit: "s"},
			finding.Fact{Name: "round_trip", Value: rtt.Seconds(), Unit: "s"},
			finding.Fact{Name: "clients", Value: float64(e.Clients), Unit: "count"},
			finding.Fact{Name: "clients_bound", Value: float64(e.Clients) / e.RequestP50.Seconds(), Unit: "puts/s"})
	case !math.IsNaN(e.PeerRTT) && e.PeerRTT >= rttLimit:
		return at(finding.Network, "", finding.Fact{Name: "peer_rtt_p99", Value: e.PeerRTT, Unit: "s", Limit: rttLimit})
	case e.LeaderChanges > 0 || e.SlowApplies > 0 || v.behind:
		return at(finding.Leader, "", backlog...)
	}
	return at(finding.Unknown, "", append([]finding.Fact{busy, share}, backlog...)...)
}

// CaseLatency is a Network limit set by each put's wait for the round
// trip: the clients, each waiting for its answer, send no faster than
// clients / (round trip + commit).
const CaseLatency = "latency"

// roundTrip is the round trip that explains a step's put latency, or 0:
// the puts' median wait beyond the leader's WAL sync is at least half
// their median, and the round trip between members (the one they were
// put apart by, else etcd's prober's p99) is at least half the median
// too. A put waits for a quorum: its leader's sync and, at the same
// time, a follower's round trip and sync.
func (lc limitContext) roundTrip(e StepEvidence) time.Duration {
	rtt := lc.peerRTT
	if rtt == 0 && !math.IsNaN(e.PeerRTT) {
		rtt = units.FromSeconds(e.PeerRTT)
	}
	p50 := e.RequestP50
	if rtt <= 0 || p50 <= 0 || e.Clients == 0 || p50-e.WALP50 < p50/2 || rtt < p50/2 {
		return 0
	}
	return rtt
}

// limitWords says a limit in words, with the evidence of its step.
func limitWords(lim finding.Finding, f result.CapacityStep, e StepEvidence, lc limitContext) string {
	w := limitWordsOf(lim, f, e, lc)
	if lim.Case != CaseLatency {
		w += lc.latencyNote(e)
	}
	return w
}

// latencyNote says, for a limit other than the round trip's, that the
// round trip was still most of each put's wait (roundTrip), "" when it
// was not: on a cluster 50 ms apart bent by its disk, each put took
// 108 ms at the median, nearly all of it the round trip.
func (lc limitContext) latencyNote(e StepEvidence) string {
	rtt := lc.roundTrip(e)
	if rtt == 0 {
		return ""
	}
	from := "the members were put apart by it"
	if lc.peerRTT == 0 {
		from = "etcd's prober's p99"
	}
	return fmt.Sprintf(". Each put waited %v at the median, most of it the round trip between members (%v, %s; the leader's WAL sync %v): the network, not this limit, sets each put's latency, and %d clients send at most %.0f puts/s that way",
		e.RequestP50.Round(100*time.Microsecond), rtt, from, e.WALP50.Round(10*time.Microsecond), e.Clients, float64(e.Clients)/e.RequestP50.Seconds())
}

// limitWordsOf is limitWords before its latency note.
func limitWordsOf(lim finding.Finding, f result.CapacityStep, e StepEvidence, lc limitContext) string {
	th, v := lc.th, lc.view(e)
	at := fmt.Sprintf("at %.0f puts/s", f.Rate)
	disk := fmt.Sprintf("WAL fsync p99 %v, backend commit p99 %v", e.WAL.Round(time.Microsecond), e.Commit.Round(time.Microsecond))
	cpu := e.cpuWords(lc.embedded)
	rtt := units.FromSeconds(e.PeerRTT).Round(10 * time.Microsecond)
	backlog := ""
	if v.behind {
		backlog = fmt.Sprintf("; the cluster fell behind: up to %.0f proposals pending, %.0f entries committed but not applied", e.Pending, e.Unapplied)
	}
	all, own := units.FromSeconds(e.Traced).Round(time.Microsecond), units.FromSeconds(e.TracedNoWait).Round(time.Microsecond)
	tracedNote := ""
	if v.traced && lim.Case != CaseTraced {
		tracedNote = fmt.Sprintf("; the eBPF trace of the same syncs gives p99 %v (%v without their waits for a CPU), under the %v limit: near it, read higher by etcd's coarse histogram", all, own, v.walLimit)
	}
	switch {
	case lim.Kind == finding.Disk && lim.Case == CaseTraced:
		return fmt.Sprintf("%s wal_fsync_p99 failed (%s), and the eBPF trace of the member's WAL syncs gives p99 %v even without their waits for a CPU (%v with them): the disk's own time is over the %v limit (%s)%s",
			at, disk, own, all, v.walLimit, cpu, backlog)
	case lim.Kind == finding.CPU && lim.Case == CaseTraced:
		return fmt.Sprintf("%s wal_fsync_p99 failed (%s), and the eBPF trace of the member's WAL syncs gives p99 %v, but %v without their waits for a CPU, within the %v limit: the syncs waited for a CPU, not for the disk (%s)%s",
			at, disk, all, own, v.walLimit, cpu, backlog)
	case lim.Kind == finding.CPU:
		why := fmt.Sprintf("the CPUs were saturated (%.0f %% busy or more counts)", 100*th.HostBusy.Limit)
		if lim.Case == CaseMember {
			why = fmt.Sprintf("%s was short of CPU (%.0f %% of its cores; %.0f %% or more counts)", v.member, 100*v.memberShare, 100*th.MemberCPU.Limit)
		}
		then := fmt.Sprintf("; %s failed (%s)", e.Failed, disk)
		if v.diskRule {
			then = fmt.Sprintf("; %s failed (%s), but etcd's own fsync histogram includes the wait for a CPU after the sync returns, so the CPU, not the disk, limits it here", e.Failed, disk)
		}
		return at + " " + why + ": " + cpu + then + backlog + tracedNote
	case lim.Kind == finding.Client:
		return fmt.Sprintf("%s the machine etcdbench runs on was saturated (%s), not necessarily the cluster: the load generator could not drive it harder, so the cluster carries at least this; %s failed (%s)",
			at, cpu, e.Failed, disk) + tracedNote
	case lim.Kind == finding.Disk:
		return fmt.Sprintf("%s the members' own disk histograms fail first: %s (%.0f syncs/s, %.1f puts a sync), with CPU to spare (%s)%s",
			at, disk, e.SyncsPerSec, e.PerSync, cpu, backlog) + tracedNote
	case lim.Kind == finding.Network && lim.Case == CaseLatency:
		rtt, from := lc.roundTrip(e), "the members were put apart by it"
		if lc.peerRTT == 0 {
			from = "etcd's prober's p99"
		}
		return fmt.Sprintf("%s each put waited %v at the median, %v of it the round trip between members (%s) and %v the leader's WAL sync: a put waits for a quorum, so for a follower's round trip; %d clients, each waiting for its answer, send at most clients / (round trip + commit) = %d / %v = %.0f puts/s, and a faster rate fails %s (%s; %s)",
			at, e.RequestP50.Round(100*time.Microsecond), rtt, from, e.WALP50.Round(10*time.Microsecond), e.Clients, e.Clients, e.RequestP50.Round(100*time.Microsecond), float64(e.Clients)/e.RequestP50.Seconds(), e.Failed, disk, cpu) + tracedNote
	case lim.Kind == finding.Network:
		return fmt.Sprintf("%s the peer round trip p99 was %v, at least %.0f %% of the %v heartbeat interval%s: the network between members delays every replicated put (%s failed; %s; %s)",
			at, rtt, 100*th.PeerRTT.Limit, lc.heartbeat, lc.heartbeatFrom, e.Failed, disk, cpu) + tracedNote
	case lim.Kind == finding.Leader:
		return fmt.Sprintf("%s the cluster fell behind its clients (%s) with the disk within its limits (%s) and the CPUs not saturated (%s): its leader, raft loop or apply did not keep up (%s failed)",
			at, e.backlogWords(), disk, cpu, e.Failed) + tracedNote
	}
	return fmt.Sprintf("%s %s failed with every resource within its limits: %s; %s; %s%s. A stall shorter than a step (GC, the disk, a neighbour) or etcd's serial raft and apply path (about one CPU) can do this; run with a longer %s to tell",
		at, e.Failed, disk, cpu, e.backlogWords(), e.rttWords(rtt), lc.longerStep()) + tracedNote
}

// busiestMember is the member using the largest share of its cores:
// its GOMAXPROCS or, for a member on this machine, the machine's CPUs.
func (e StepEvidence) busiestMember(embedded bool) (name string, share float64) {
	cores := e.Cores
	if math.IsNaN(cores) && embedded && e.Host != nil {
		cores = float64(e.Host.CPUs)
	}
	if !(cores > 0) {
		return "", 0
	}
	for _, m := range e.Members {
		if s := m.CPUs / cores; s > share {
			name, share = "etcd "+m.Name, s
		}
	}
	return name, share
}

// cpuWords says how the CPUs were used: the machine's (when measured),
// each member's and the load generator's.
func (e StepEvidence) cpuWords(embedded bool) string {
	var parts []string
	if e.Host != nil {
		whose := "the machine's"
		if !embedded {
			whose = "the load generator's machine's"
		}
		parts = append(parts, fmt.Sprintf("%s %d CPUs %.0f %% busy", whose, e.Host.CPUs, 100*e.Host.Busy))
	}
	if len(e.Members) > 0 {
		var ms []string
		for _, m := range e.Members {
			ms = append(ms, fmt.Sprintf("%s %.2f", m.Name, m.CPUs))
		}
		of := ""
		switch {
		case math.IsNaN(e.Cores):
		case len(e.Members) == 1:
			of = fmt.Sprintf(" of %.0f", e.Cores)
		default:
			of = fmt.Sprintf(" of %.0f each", e.Cores)
		}
		parts = append(parts, "etcd "+strings.Join(ms, ", ")+" CPUs"+of)
	} else {
		parts = append(parts, "etcd's process CPU not exposed")
	}
	if !math.IsNaN(e.ClientCPU) {
		parts = append(parts, fmt.Sprintf("the load generator %.2f CPUs", e.ClientCPU))
	}
	return strings.Join(parts, ", ")
}

// backlogWords says what the leader and the proposal backlog did.
func (e StepEvidence) backlogWords() string {
	parts := []string{fmt.Sprintf("%.0f leader changes", e.LeaderChanges)}
	if e.SlowApplies > 0 {
		parts = append(parts, fmt.Sprintf("%.0f applies over 100 ms", e.SlowApplies))
	}
	if !math.IsNaN(e.Pending) {
		parts = append(parts, fmt.Sprintf("up to %.0f proposals pending and %.0f entries committed but not applied", e.Pending, e.Unapplied))
	} else {
		parts = append(parts, "proposal backlog not sampled")
	}
	return strings.Join(parts, ", ")
}

// rttWords is the peer round trip, when one was observed.
func (e StepEvidence) rttWords(rtt time.Duration) string {
	if math.IsNaN(e.PeerRTT) {
		return ""
	}
	return fmt.Sprintf("; peer round trip p99 %v", rtt)
}

package etcdrun

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"etcdbench/internal/capacity"
	"etcdbench/internal/etcdcluster"
	"etcdbench/internal/result"
	"etcdbench/internal/units"
	"etcdbench/internal/verdict"
)

// The limiting resources `etcd capacity` names.
const (
	// LimitCPU: the machine's CPUs, or a member's, were saturated at the
	// lowest failing rate, whatever rule failed (etcd's fsync histogram
	// counts the wait for a CPU after the sync returns).
	LimitCPU = "cpu"
	// LimitDisk: the members' WAL fsync or backend commit p99 failed
	// with CPU to spare.
	LimitDisk = "disk"
	// LimitNetwork: the peer round trip came near the heartbeat interval.
	LimitNetwork = "network"
	// LimitLeader: leader changes, slow applies or a proposal backlog,
	// with the disk, the CPUs and the network within their limits.
	LimitLeader = "leader"
	// LimitClient: the load generator's machine (not the cluster's) was
	// saturated; the cluster carries at least what was measured.
	LimitClient = "client"
	// LimitUnknown: a rule failed with every resource within its limit.
	LimitUnknown = "unknown"
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

// stepEvidence is what a step's Extra figures say about the resources.
type stepEvidence struct {
	rate                 float64
	failed               string // the failed rule's id
	wal, commit          time.Duration
	syncsPerSec, perSync float64
	hostBusy, hostCPUs   float64 // NaN: not measured
	client               float64 // NaN: not measured
	members              []memberCPU
	cores                float64 // NaN: not known
	leaders              float64
	pending, unapplied   float64 // NaN: not sampled
	peerRTT              float64 // seconds; NaN: no round trip observed
	// traced and tracedNoWait are the eBPF-traced WAL sync p99, with and
	// without the waits for a CPU (seconds; NaN: not traced).
	traced, tracedNoWait float64
	slowApplies          float64
	diskRule             bool
}

// memberCPU is one member's CPUs used.
type memberCPU struct {
	name string
	cpus float64
}

func evidenceOf(s result.CapacityStep) stepEvidence {
	extra := func(name string) float64 {
		for _, x := range s.Extra {
			if x.Name == name {
				return x.Value
			}
		}
		return math.NaN()
	}
	e := stepEvidence{
		rate: s.Rate, failed: strings.SplitN(s.Failed, ":", 2)[0],
		wal: time.Duration(s.SyncP99Ns), commit: units.FromSeconds(orZero(extra("backend_commit_p99"))),
		syncsPerSec: s.SyncsPerSec, perSync: s.EntriesPerSync,
		hostBusy: extra("host_cpu_busy"), hostCPUs: extra("host_cpus"), client: extra("client_cpu"),
		cores: extra("member_cores"), leaders: orZero(extra("leader_changes")),
		pending: extra("proposals_pending_max"), unapplied: extra("proposals_unapplied_max"), peerRTT: extra("peer_rtt_p99"),
		traced: extra("traced_wal_sync_p99"), tracedNoWait: extra("traced_wal_sync_no_cpu_wait_p99"),
	}
	for _, x := range s.Extra {
		if strings.HasPrefix(x.Name, "member") && strings.HasSuffix(x.Name, "_cpu") {
			e.members = append(e.members, memberCPU{strings.TrimSuffix(x.Name, "_cpu"), x.Value})
		}
	}
	sort.Slice(e.members, func(i, j int) bool { return e.members[i].name < e.members[j].name })
	e.diskRule = e.failed == "wal_fsync_p99" || e.failed == "backend_commit_p99"
	e.slowApplies = orZero(extra("slow_applies"))
	return e
}

func orZero(v float64) float64 {
	if math.IsNaN(v) {
		return 0
	}
	return v
}

// limitContext is what the classification knows beyond the steps.
type limitContext struct {
	// embedded: the members run on this machine, so its CPUs are theirs.
	embedded bool
	// heartbeat is the members' heartbeat interval; heartbeatFrom says
	// where it comes from when it was not set.
	heartbeat     time.Duration
	heartbeatFrom string
	th            LimitThresholds
}

// limitingResource names what limits etcd at the lowest failing rate,
// from that step's evidence rather than only from the rule that failed,
// and says why in words.
func limitingResource(c *result.Capacity, lc limitContext) (kind, evidence string) {
	var f *result.CapacityStep
	for i := range c.Steps {
		if s := &c.Steps[i]; capacity.Counted(*s) && !capacity.Passed(*s) && (f == nil || s.Rate < f.Rate) {
			f = s
		}
	}
	if f == nil {
		return capacity.BendNone, "no step failed: the limit lies above the highest rate tried"
	}
	kind, evidence = nameLimit(*f, lc)
	// A faster step that passed (the probe, often) says the failure was
	// a passing stall of the disk, the machine or a neighbour, not a
	// limit: the answer is that step's, and it says so.
	var above *result.CapacityStep
	for i := range c.Steps {
		if s := &c.Steps[i]; s.Rate > f.Rate && capacity.Passed(*s) && (above == nil || s.Rate > above.Rate) {
			above = s
		}
	}
	if above != nil {
		evidence += fmt.Sprintf(". But the step at %.0f puts/s passed (WAL fsync p99 %v): the failure at %.0f was transient, a stall rather than a limit; run again, or with a longer --step",
			above.Rate, time.Duration(above.SyncP99Ns).Round(time.Microsecond), f.Rate)
	}
	return kind, evidence
}

// nameLimit names the resource that limits the failing step f.
func nameLimit(f result.CapacityStep, lc limitContext) (kind, evidence string) {
	if lc.heartbeat == 0 {
		lc.heartbeat, lc.heartbeatFrom = etcdcluster.DefaultHeartbeat, " (etcd's default)"
		if !lc.embedded {
			lc.heartbeatFrom = " (etcd's default; the cluster's own is not known here)"
		}
	}
	e := evidenceOf(f)
	at := fmt.Sprintf("at %.0f puts/s", e.rate)
	disk := fmt.Sprintf("WAL fsync p99 %v, backend commit p99 %v", e.wal.Round(time.Microsecond), e.commit.Round(time.Microsecond))
	cpu := e.cpuWords(lc.embedded)
	th := lc.th
	hostSaturated := !math.IsNaN(e.hostBusy) && e.hostBusy >= th.HostBusy.Limit
	member, memberShare := e.busiestMember(lc.embedded)
	memberSaturated := memberShare >= th.MemberCPU.Limit
	rtt := units.FromSeconds(e.peerRTT).Round(10 * time.Microsecond)
	behind := e.pending >= th.Pending.Limit || e.unapplied >= th.Unapplied.Limit
	backlog := ""
	if behind {
		backlog = fmt.Sprintf("; the cluster fell behind: up to %.0f proposals pending, %.0f entries committed but not applied", e.pending, e.unapplied)
	}
	walLimit := units.FromSeconds(verdict.Defaults().WALFsyncP99.Limit)
	tracedNote := ""
	if e.failed == "wal_fsync_p99" && !math.IsNaN(e.tracedNoWait) && !math.IsNaN(e.traced) {
		// The most direct evidence: the kernel's own timing of the same
		// syncs, split into the disk's time and the wait for a CPU.
		all, own := units.FromSeconds(e.traced).Round(time.Microsecond), units.FromSeconds(e.tracedNoWait).Round(time.Microsecond)
		switch {
		case own >= walLimit:
			return LimitDisk, fmt.Sprintf("%s wal_fsync_p99 failed (%s), and the eBPF trace of the member's WAL syncs gives p99 %v even without their waits for a CPU (%v with them): the disk's own time is over the %v limit (%s)%s",
				at, disk, own, all, walLimit, cpu, backlog)
		case all >= walLimit:
			return LimitCPU, fmt.Sprintf("%s wal_fsync_p99 failed (%s), and the eBPF trace of the member's WAL syncs gives p99 %v, but %v without their waits for a CPU, within the %v limit: the syncs waited for a CPU, not for the disk (%s)%s",
				at, disk, all, own, walLimit, cpu, backlog)
		}
		// The kernel timed the syncs under the limit, waits and all:
		// etcd's histogram read more (its 8-16 ms bucket is interpolated,
		// and it counts the Go runtime's delay after the call returns).
		// The other evidence decides; the trace is said.
		tracedNote = fmt.Sprintf("; the eBPF trace of the same syncs gives p99 %v (%v without their waits for a CPU), under the %v limit: near it, read higher by etcd's coarse histogram", all, own, walLimit)
	}
	defer func() { evidence += tracedNote }()
	switch {
	case memberSaturated || hostSaturated && lc.embedded:
		why := fmt.Sprintf("the CPUs were saturated (%.0f %% busy or more counts)", 100*th.HostBusy.Limit)
		if !hostSaturated || !lc.embedded {
			why = fmt.Sprintf("%s was short of CPU (%.0f %% of its cores; %.0f %% or more counts)", member, 100*memberShare, 100*th.MemberCPU.Limit)
		}
		then := fmt.Sprintf("; %s failed (%s)", e.failed, disk)
		if e.diskRule {
			then = fmt.Sprintf("; %s failed (%s), but etcd's own fsync histogram includes the wait for a CPU after the sync returns, so the CPU, not the disk, limits it here", e.failed, disk)
		}
		return LimitCPU, at + " " + why + ": " + cpu + then + backlog
	case hostSaturated: // the load generator's machine, not the members'
		return LimitClient, fmt.Sprintf("%s the machine etcdbench runs on was saturated (%s), not necessarily the cluster: the load generator could not drive it harder, so the cluster carries at least this; %s failed (%s)",
			at, cpu, e.failed, disk)
	case e.diskRule:
		return LimitDisk, fmt.Sprintf("%s the members' own disk histograms fail first: %s (%.0f syncs/s, %.1f puts a sync), with CPU to spare (%s)%s",
			at, disk, e.syncsPerSec, e.perSync, cpu, backlog)
	case !math.IsNaN(e.peerRTT) && e.peerRTT >= th.PeerRTT.Limit*lc.heartbeat.Seconds():
		return LimitNetwork, fmt.Sprintf("%s the peer round trip p99 was %v, at least %.0f %% of the %v heartbeat interval%s: the network between members delays every replicated put (%s failed; %s; %s)",
			at, rtt, 100*th.PeerRTT.Limit, lc.heartbeat, lc.heartbeatFrom, e.failed, disk, cpu)
	case e.leaders > 0 || e.slowApplies > 0 || behind:
		return LimitLeader, fmt.Sprintf("%s the cluster fell behind its clients (%s) with the disk within its limits (%s) and the CPUs not saturated (%s): its leader, raft loop or apply did not keep up (%s failed)",
			at, e.backlogWords(), disk, cpu, e.failed)
	}
	return LimitUnknown, fmt.Sprintf("%s %s failed with every resource within its limits: %s; %s; %s%s. A stall shorter than a step (GC, the disk, a neighbour) or etcd's serial raft and apply path (about one CPU) can do this; run longer --step to tell",
		at, e.failed, disk, cpu, e.backlogWords(), e.rttWords(rtt))
}

// busiestMember is the member using the largest share of its cores:
// its GOMAXPROCS or, for a member on this machine, the machine's CPUs.
func (e stepEvidence) busiestMember(embedded bool) (name string, share float64) {
	cores := e.cores
	if math.IsNaN(cores) && embedded {
		cores = e.hostCPUs
	}
	if !(cores > 0) {
		return "", 0
	}
	for _, m := range e.members {
		if s := m.cpus / cores; s > share {
			name, share = "etcd "+m.name, s
		}
	}
	return name, share
}

// cpuWords says how the CPUs were used: the machine's (when measured),
// each member's and the load generator's.
func (e stepEvidence) cpuWords(embedded bool) string {
	var parts []string
	if !math.IsNaN(e.hostBusy) {
		whose := "the machine's"
		if !embedded {
			whose = "the load generator's machine's"
		}
		parts = append(parts, fmt.Sprintf("%s %.0f CPUs %.0f %% busy", whose, e.hostCPUs, 100*e.hostBusy))
	}
	if len(e.members) > 0 {
		var ms []string
		for _, m := range e.members {
			ms = append(ms, fmt.Sprintf("%s %.2f", m.name, m.cpus))
		}
		of := ""
		switch {
		case math.IsNaN(e.cores):
		case len(e.members) == 1:
			of = fmt.Sprintf(" of %.0f", e.cores)
		default:
			of = fmt.Sprintf(" of %.0f each", e.cores)
		}
		parts = append(parts, "etcd "+strings.Join(ms, ", ")+" CPUs"+of)
	} else {
		parts = append(parts, "etcd's process CPU not exposed")
	}
	if !math.IsNaN(e.client) {
		parts = append(parts, fmt.Sprintf("the load generator %.2f CPUs", e.client))
	}
	return strings.Join(parts, ", ")
}

// backlogWords says what the leader and the proposal backlog did.
func (e stepEvidence) backlogWords() string {
	parts := []string{fmt.Sprintf("%.0f leader changes", e.leaders)}
	if e.slowApplies > 0 {
		parts = append(parts, fmt.Sprintf("%.0f applies over 100 ms", e.slowApplies))
	}
	if !math.IsNaN(e.pending) {
		parts = append(parts, fmt.Sprintf("up to %.0f proposals pending and %.0f entries committed but not applied", e.pending, e.unapplied))
	} else {
		parts = append(parts, "proposal backlog not sampled")
	}
	return strings.Join(parts, ", ")
}

// rttWords is the peer round trip, when one was observed.
func (e stepEvidence) rttWords(rtt time.Duration) string {
	if math.IsNaN(e.peerRTT) {
		return ""
	}
	return fmt.Sprintf("; peer round trip p99 %v", rtt)
}

package etcdside

import (
	"fmt"
	"maps"
	"math"
	"strings"
	"testing"
	"time"

	"etcdbench/internal/etcdload"
	"etcdbench/internal/etcdload/metrics"
	"etcdbench/internal/etcdload/observe"
	"etcdbench/internal/finding"
	"etcdbench/internal/result"
	"etcdbench/internal/stats"
	"etcdbench/internal/trace"
	"etcdbench/internal/verdict"
)

// A step's point and evidence come from the load's typed members: the
// worst member for the disk, leader and backlog, each member's CPU, the
// fewest cores.
func TestStepOf(t *testing.T) {
	nan := math.NaN()
	member := func(name string, wal, commit metrics.Histogram, leaders, cpu, cores float64, b observe.Backlog, rtt float64) observe.Member {
		return observe.Member{Target: observe.Target{Name: name}, WALFsync: wal, BackendCommit: commit, LeaderChanges: leaders,
			SlowApplies: nan, ApplyP99: nan, DBSize: nan, CPU: cpu, Cores: cores, Backlog: b, PeerRTTP99: rtt}
	}
	out := &etcdload.Outcome{
		Workload: result.Workload{
			OpsPerSec: 990, Ops: 9900, DurationNs: int64(10 * time.Second),
			Latencies: []result.Latency{{Name: "request"}},
			Process:   &result.ProcessStats{UserNs: int64(3 * time.Second), SystemNs: int64(2 * time.Second)},
			Verdicts:  []verdict.Verdict{{Check: "check_perf_throughput", Status: verdict.Pass}, {Check: "wal_fsync_p99", Title: "WAL", Status: verdict.Fail, Detail: "slow"}},
		},
		Host: &observe.Host{Busy: 0.8, CPUs: 4},
		Members: []observe.Member{
			// 3300 syncs: p99 in (1,2] ms; commits p99 in (2,4] ms
			member("member0", metrics.DiskHistogram(0, 3300), metrics.DiskHistogram(0, 0, 100), 0, 1.2, 4, observe.Backlog{Pending: 12, Unapplied: 7, Samples: 5}, nan),
			// p99 in (8,16] ms; commits in (16,32] ms
			member("member1", metrics.DiskHistogram(0, 0, 0, 0, 100), metrics.DiskHistogram(0, 0, 0, 0, 0, 100), 1, 0.4, 2, observe.Backlog{Pending: 40, Samples: 5}, 0.0004),
		},
	}
	s, e := stepOf(out)
	if s.SyncP99Ns != int64(15920*time.Microsecond) || s.Syncs != 3300 || s.EntriesPerSync != 3 || s.Status != verdict.Fail || !strings.HasPrefix(s.Failed, "wal_fsync_p99") {
		t.Fatalf("step %+v", s)
	}
	want := StepEvidence{Failed: "wal_fsync_p99", WAL: 15920 * time.Microsecond, Commit: 31840 * time.Microsecond, SyncsPerSec: 330, PerSync: 3,
		LeaderChanges: 1, SlowApplies: nan, ClientCPU: 0.5, Host: out.Host, Members: []MemberCPU{{"member0", 1.2}, {"member1", 0.4}},
		Cores: 2, Pending: 40, Unapplied: 7, PeerRTT: 0.0004, WALP50: 12 * time.Millisecond, Traced: nan, TracedNoWait: nan}
	if fmt.Sprint(e) != fmt.Sprint(want) {
		t.Fatalf("evidence\n got %+v\nwant %+v", e, want)
	}
	got := map[string]float64{}
	for _, f := range e.Figures() {
		got[f.Name] = f.Value
	}
	figs := map[string]float64{
		"backend_commit_p99": 0.03184, "leader_changes": 1, "client_cpu": 0.5, "host_cpu_busy": 0.8, "host_cpus": 4,
		"member0_cpu": 1.2, "member1_cpu": 0.4, "member_cores": 2, "proposals_pending_max": 40, "proposals_unapplied_max": 7, "peer_rtt_p99": 0.0004,
	}
	if !maps.EqualFunc(got, figs, func(a, b float64) bool { return math.Abs(a-b) < 1e-12 }) {
		t.Fatalf("evidence figures\n got %v\nwant %v", got, figs)
	}
	e.addTrace(&trace.WALSyncs{All: result.Latency{Summary: stats.Summary{Count: 10, Percentiles: []stats.Percentile{{P: 99, ValueNs: int64(3 * time.Millisecond)}}}}})
	tw := result.Workload{Figures: e.Figures()}
	if f := tw.Figure("traced_wal_sync_p99"); f == nil || f.Value != 0.003 {
		t.Errorf("traced figure %+v", f)
	}
}

// The resource named at the lowest failing rate, from the step's typed
// evidence, with the facts that decided it.
func TestLimitingResource(t *testing.T) {
	nan := math.NaN()
	// step is a step at rate whose rule failed (none: it passed) and
	// its evidence: the machine 40 % busy, one member at 0.5 of 2 CPUs,
	// no backlog, unless set says otherwise.
	type stepEv struct {
		s result.CapacityStep
		e StepEvidence
	}
	step := func(rate float64, failed string, set ...func(*StepEvidence)) stepEv {
		s := result.CapacityStep{Rate: rate, Status: verdict.Pass, Decided: true, SyncP99Ns: int64(3 * time.Millisecond)}
		e := StepEvidence{WAL: 3 * time.Millisecond, Commit: 5 * time.Millisecond, SlowApplies: nan, ClientCPU: 0.3, Host: &observe.Host{Busy: 0.4, CPUs: 2},
			Members: []MemberCPU{{"member0", 0.5}}, Cores: 2, Pending: 3, Unapplied: 0, PeerRTT: nan, Traced: nan, TracedNoWait: nan}
		if failed != "" {
			s.Status, s.Failed, e.Failed = verdict.Fail, failed+": detail", failed
		}
		for _, f := range set {
			f(&e)
		}
		return stepEv{s, e}
	}
	busy := func(b float64) func(*StepEvidence) {
		return func(e *StepEvidence) { e.Host = &observe.Host{Busy: b, CPUs: 2} }
	}
	external := func(e *StepEvidence) {
		if e.Host.Busy < 0.9 {
			e.Host = nil
		}
	}
	traced := func(all, own float64) func(*StepEvidence) {
		return func(e *StepEvidence) { e.Traced, e.TracedNoWait = all, own }
	}
	ok := step(100, "")
	for _, tc := range []struct {
		name     string
		steps    []stepEv
		external bool
		kind     finding.Kind
		fcase    string
		facts    map[string]float64 // some of the facts it must give
	}{
		{"none", []stepEv{ok}, false, finding.None, "", nil},
		{"disk with CPU to spare", []stepEv{ok, step(400, "check_perf_slowest"), step(200, "wal_fsync_p99")}, false,
			finding.Disk, "", map[string]float64{"rate": 200, "wal_fsync_p99": 0.003, "host_cpu_busy": 0.4, "member_cpu_share": 0.25}},
		{"disk rule on a saturated machine is cpu", []stepEv{ok, step(200, "wal_fsync_p99", busy(0.97), func(e *StepEvidence) { e.Pending = 462 })}, false,
			finding.CPU, CaseMachine, map[string]float64{"host_cpu_busy": 0.97}},
		{"a member at its cores", []stepEv{ok, step(200, "check_perf_throughput", func(e *StepEvidence) { e.Members[0].CPUs = 1.9 })}, false,
			finding.CPU, CaseMember, map[string]float64{"member_cpu_share": 0.95}},
		{"a member at its cores, external", []stepEv{step(100, "", external), step(200, "wal_fsync_p99", external, func(e *StepEvidence) { e.Members = []MemberCPU{{"member0", 1.9}} })}, true,
			finding.CPU, CaseMember, map[string]float64{"member_cpu_share": 0.95}},
		{"the load generator's machine, external", []stepEv{step(100, "", external), step(200, "check_perf_throughput", busy(0.95))}, true,
			finding.Client, "", map[string]float64{"host_cpu_busy": 0.95}},
		{"peer round trip", []stepEv{ok, step(200, "check_perf_stddev", func(e *StepEvidence) { e.PeerRTT = 0.06 })}, false,
			finding.Network, "", map[string]float64{"peer_rtt_p99": 0.06}},
		{"the round trip sets each put's wait", []stepEv{ok, step(1000, "check_perf_throughput", func(e *StepEvidence) {
			e.RequestP50, e.WALP50, e.Clients, e.PeerRTT = 55*time.Millisecond, time.Millisecond, 50, 0.051
		})}, false,
			finding.Network, CaseLatency, map[string]float64{"request_p50": 0.055, "round_trip": 0.051, "clients": 50, "clients_bound": 50 / 0.055}},
		{"the disk bends it, the round trip is each put's wait", []stepEv{ok, step(714, "backend_commit_p99", func(e *StepEvidence) {
			e.RequestP50, e.WALP50, e.Clients, e.PeerRTT, e.Commit = 108*time.Millisecond, 2*time.Millisecond, 200, 0.1024, 28*time.Millisecond
		})}, false,
			finding.Disk, "", nil},
		{"a slow put that the round trip does not explain", []stepEv{ok, step(1000, "check_perf_throughput", func(e *StepEvidence) {
			e.RequestP50, e.WALP50, e.Clients, e.PeerRTT = 55*time.Millisecond, time.Millisecond, 50, 0.002
		})}, false,
			finding.Unknown, "", nil},
		{"leader changes", []stepEv{ok, step(200, "check_perf_throughput", func(e *StepEvidence) { e.LeaderChanges = 2 })}, false,
			finding.Leader, "", map[string]float64{"leader_changes": 2}},
		{"slow applies", []stepEv{ok, step(200, "check_perf_slowest", func(e *StepEvidence) { e.SlowApplies = 3 })}, false,
			finding.Leader, "", map[string]float64{"slow_applies": 3}},
		{"proposal backlog", []stepEv{ok, step(200, "check_perf_slowest", func(e *StepEvidence) { e.Pending = 350 })}, false,
			finding.Leader, "", map[string]float64{"proposals_pending_max": 350}},
		{"a stall: a faster step passed", []stepEv{ok, step(150, "wal_fsync_p99"), {result.CapacityStep{Phase: "probe", Rate: 300, Status: verdict.Pass, Decided: true, SyncP99Ns: int64(time.Millisecond)}, StepEvidence{}}}, false,
			finding.Disk, "", map[string]float64{"rate": 150, FactPassedAbove: 300}},
		{"traced: the syncs waited for a CPU", []stepEv{ok, step(200, "wal_fsync_p99", traced(0.014, 0.002))}, false,
			finding.CPU, CaseTraced, map[string]float64{"traced_wal_sync_p99": 0.014, "traced_wal_sync_no_cpu_wait_p99": 0.002}},
		// etcd's histogram over the limit, the kernel's timing of the same
		// syncs under it with no wait for a CPU: the trace does not decide,
		// the CPU figures (40 % busy) do.
		{"traced: under the limit", []stepEv{ok, step(200, "wal_fsync_p99", traced(0.0095, 0.0095))}, false,
			finding.Disk, "", map[string]float64{"host_cpu_busy": 0.4}},
		{"traced: the disk's own time", []stepEv{ok, step(200, "wal_fsync_p99", busy(0.97), traced(0.02, 0.016))}, false,
			finding.Disk, CaseTraced, map[string]float64{"traced_wal_sync_no_cpu_wait_p99": 0.016}},
		{"nothing at its limit", []stepEv{ok, step(200, "check_perf_throughput")}, false,
			finding.Unknown, "", map[string]float64{"host_cpu_busy": 0.4, "proposals_pending_max": 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &result.Capacity{}
			var evs []StepEvidence
			for _, x := range tc.steps {
				c.Steps, evs = append(c.Steps, x.s), append(evs, x.e)
			}
			got, words := limitingResource(c, evs, limitContext{embedded: !tc.external, started: !tc.external, th: LimitDefaults()})
			t.Logf("%s: %s", got.Kind, words)
			if got.Kind != tc.kind || got.Case != tc.fcase || words == "" {
				t.Fatalf("limitingResource = %+v, want %q case %q", got, tc.kind, tc.fcase)
			}
			if note := strings.Contains(words, "most of it the round trip between members"); note != strings.HasPrefix(tc.name, "the disk bends it, the round trip") {
				t.Errorf("latency note %v in %q", note, words)
			}
			for name, want := range tc.facts {
				if f, ok := got.Fact(name); !ok || math.Abs(f.Value-want) > 1e-12 {
					t.Errorf("fact %s = %+v (present %v), want %v", name, f, ok, want)
				}
			}
			// Advice to lengthen the steps names the flag of the command
			// that ran the sweep: capacity's etcd side has --cpu-step.
			if strings.Contains(words, "longer --step") {
				_, cpuWords := limitingResource(c, evs, limitContext{embedded: !tc.external, started: !tc.external, th: LimitDefaults(), stepFlag: "--cpu-step"})
				if !strings.Contains(cpuWords, "longer --cpu-step") || strings.Contains(cpuWords, "--step ") {
					t.Errorf("under capacity the advice reads %q", cpuWords)
				}
			}
		})
	}
}

func TestPresetAt(t *testing.T) {
	for rate, clients := range map[float64]int{100: 50, 150: 50, 151: 200, 5000: 500, 40000: 1000} {
		if p := presetAt(rate, time.Second); p.Clients != clients || p.Rate != rate || p.Duration != time.Second {
			t.Errorf("presetAt(%v) = %+v, want %d clients", rate, p, clients)
		}
	}
}

package etcdrun

import (
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"etcdbench/internal/capacity"
	"etcdbench/internal/result"
	"etcdbench/internal/verdict"
)

func TestPutStep(t *testing.T) {
	w := result.Workload{
		OpsPerSec: 990, Ops: 9900, DurationNs: int64(10 * time.Second),
		Latencies: []result.Latency{{Name: "request"}},
		Figures: []result.Figure{
			{Name: "member0_wal_fsync_p99", Value: 0.004, Unit: "s"}, {Name: "member1_wal_fsync_p99", Value: 0.012, Unit: "s"},
			{Name: "member0_wal_fsyncs", Value: 3300, Unit: "count"}, {Name: "member1_leader_changes", Value: 1, Unit: "count"},
		},
		Verdicts: []verdict.Verdict{{Check: "check_perf_throughput", Status: verdict.Pass}, {Check: "wal_fsync_p99", Title: "WAL", Status: verdict.Fail, Detail: "slow"}},
	}
	s := putStep(w)
	if s.SyncP99Ns != int64(12*time.Millisecond) || s.Syncs != 3300 || s.EntriesPerSync != 3 || s.Status != verdict.Fail || !strings.HasPrefix(s.Failed, "wal_fsync_p99") {
		t.Fatalf("step %+v", s)
	}
}

// The resource named at the lowest failing rate, from the step's
// evidence, with the figures that decided it in its words.
func TestLimitingResource(t *testing.T) {
	fig := func(name string, v float64) result.Figure { return result.Figure{Name: name, Value: v} }
	// step is a step at rate whose rule failed (none: it passed), with
	// the machine 40 % busy, one member at 0.5 of 2 CPUs and no backlog
	// unless extra says otherwise.
	step := func(rate float64, failed string, extra ...result.Figure) result.CapacityStep {
		s := result.CapacityStep{Rate: rate, Status: verdict.Pass, SyncP99Ns: int64(3 * time.Millisecond)}
		base := []result.Figure{fig("leader_changes", 0), fig("backend_commit_p99", 0.005), fig("client_cpu", 0.3),
			fig("host_cpu_busy", 0.4), fig("host_cpus", 2), fig("member0_cpu", 0.5), fig("member_cores", 2),
			fig("proposals_pending_max", 3), fig("proposals_unapplied_max", 0)}
		for _, b := range base {
			for _, x := range extra {
				if x.Name == b.Name {
					b = x
				}
			}
			s.Extra = append(s.Extra, b)
		}
		for _, x := range extra {
			if !slices.ContainsFunc(base, func(b result.Figure) bool { return b.Name == x.Name }) {
				s.Extra = append(s.Extra, x)
			}
		}
		if failed != "" {
			s.Status, s.Failed = verdict.Fail, failed+": detail"
		}
		return s
	}
	external := func(s result.CapacityStep) result.CapacityStep {
		s.Extra = slices.DeleteFunc(slices.Clone(s.Extra), func(f result.Figure) bool { return f.Name == "host_cpu_busy" && f.Value < 0.9 })
		return s
	}
	ok := step(100, "")
	for _, tc := range []struct {
		name     string
		steps    []result.CapacityStep
		external bool
		want     string
		says     []string
	}{
		{"none", []result.CapacityStep{ok}, false, capacity.BendNone, []string{"no step failed"}},
		{"disk with CPU to spare", []result.CapacityStep{ok, step(400, "check_perf_slowest"), step(200, "wal_fsync_p99")}, false,
			LimitDisk, []string{"at 200 puts/s", "WAL fsync p99 3ms", "CPU to spare", "2 CPUs 40 % busy", "member0 0.50 CPUs of 2,", "load generator 0.30 CPUs"}},
		{"disk rule on a saturated machine is cpu", []result.CapacityStep{ok, step(200, "wal_fsync_p99", fig("host_cpu_busy", 0.97), fig("proposals_pending_max", 462))}, false,
			LimitCPU, []string{"saturated", "97 % busy", "wal_fsync_p99 failed", "wait for a CPU after the sync returns", "fell behind: up to 462 proposals pending"}},
		{"a member at its cores", []result.CapacityStep{ok, step(200, "check_perf_throughput", fig("member0_cpu", 1.9))}, false,
			LimitCPU, []string{"etcd member0 was short of CPU (95 % of its cores", "check_perf_throughput failed"}},
		{"a member at its cores, external", []result.CapacityStep{external(ok), external(step(200, "wal_fsync_p99", fig("member0_cpu", 1.9)))}, true,
			LimitCPU, []string{"etcd member0 was short of CPU (95 % of its cores", "wait for a CPU"}},
		{"the load generator's machine, external", []result.CapacityStep{external(ok), step(200, "check_perf_throughput", fig("host_cpu_busy", 0.95))}, true,
			LimitClient, []string{"load generator's machine's 2 CPUs 95 % busy", "carries at least this"}},
		{"peer round trip", []result.CapacityStep{ok, step(200, "check_perf_stddev", fig("peer_rtt_p99", 0.06))}, false,
			LimitNetwork, []string{"peer round trip p99 was 60ms", "100ms heartbeat interval (etcd's default)"}},
		{"leader changes", []result.CapacityStep{ok, step(200, "check_perf_throughput", fig("leader_changes", 2))}, false,
			LimitLeader, []string{"2 leader changes", "did not keep up"}},
		{"slow applies", []result.CapacityStep{ok, step(200, "check_perf_slowest", fig("slow_applies", 3))}, false,
			LimitLeader, []string{"3 applies over 100 ms"}},
		{"proposal backlog", []result.CapacityStep{ok, step(200, "check_perf_slowest", fig("proposals_pending_max", 350))}, false,
			LimitLeader, []string{"up to 350 proposals pending"}},
		{"a stall: a faster step passed", []result.CapacityStep{ok, step(150, "wal_fsync_p99"), {Phase: "probe", Rate: 300, Status: verdict.Pass, SyncP99Ns: int64(time.Millisecond)}}, false,
			LimitDisk, []string{"at 150 puts/s the members' own disk histograms fail first", "the step at 300 puts/s passed (WAL fsync p99 1ms): the failure at 150 was transient"}},
		{"traced: the syncs waited for a CPU", []result.CapacityStep{ok, step(200, "wal_fsync_p99", fig("traced_wal_sync_p99", 0.014), fig("traced_wal_sync_no_cpu_wait_p99", 0.002))}, false,
			LimitCPU, []string{"eBPF trace", "p99 14ms, but 2ms without their waits for a CPU", "not for the disk"}},
		// etcd's histogram over the limit, the kernel's timing of the same
		// syncs under it with no wait for a CPU: the trace does not decide,
		// the CPU figures (40 % busy) do, and the trace is said.
		{"traced: under the limit", []result.CapacityStep{ok, step(200, "wal_fsync_p99", fig("traced_wal_sync_p99", 0.0095), fig("traced_wal_sync_no_cpu_wait_p99", 0.0095))}, false,
			LimitDisk, []string{"CPU to spare", "the eBPF trace of the same syncs gives p99 9.5ms (9.5ms without their waits for a CPU), under the 10ms limit"}},
		{"traced: the disk's own time", []result.CapacityStep{ok, step(200, "wal_fsync_p99", fig("host_cpu_busy", 0.97), fig("traced_wal_sync_p99", 0.02), fig("traced_wal_sync_no_cpu_wait_p99", 0.016))}, false,
			LimitDisk, []string{"eBPF trace", "p99 16ms even without their waits for a CPU", "disk's own time"}},
		{"nothing at its limit", []result.CapacityStep{ok, step(200, "check_perf_throughput")}, false,
			LimitUnknown, []string{"check_perf_throughput failed with every resource within its limits", "40 % busy", "up to 3 proposals pending"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, why := limitingResource(&result.Capacity{Steps: tc.steps}, limitContext{embedded: !tc.external, th: LimitDefaults()})
			t.Logf("%s: %s", got, why)
			if got != tc.want {
				t.Fatalf("limitingResource = %q (%s), want %q", got, why, tc.want)
			}
			for _, w := range tc.says {
				if !strings.Contains(why, w) {
					t.Errorf("evidence does not say %q:\n%s", w, why)
				}
			}
		})
	}
}

// A step's evidence comes from its workload's figures: the worst member
// for the disk, leader and backlog, each member's CPU, the fewest cores.
func TestStepEvidenceFigures(t *testing.T) {
	w := result.Workload{
		DurationNs: int64(2 * time.Second),
		Process:    &result.ProcessStats{UserNs: int64(600 * time.Millisecond), SystemNs: int64(400 * time.Millisecond)},
		Figures: []result.Figure{
			{Name: "member0_backend_commit_p99", Value: 0.004, Unit: "s"}, {Name: "member1_backend_commit_p99", Value: 0.03, Unit: "s"},
			{Name: "member0_leader_changes", Value: 0}, {Name: "member2_leader_changes", Value: 1},
			{Name: "member0_cpu", Value: 1.2, Unit: "x"}, {Name: "member1_cpu", Value: 0.4, Unit: "x"},
			{Name: "member0_cores", Value: 4}, {Name: "member1_cores", Value: 2},
			{Name: "member0_proposals_pending_max", Value: 12}, {Name: "member1_proposals_pending_max", Value: 40},
			{Name: "member0_proposals_unapplied_max", Value: 7}, {Name: "member1_peer_rtt_p99", Value: 0.0004, Unit: "s"},
			{Name: "host_cpu_busy", Value: 0.8, Unit: "ratio"}, {Name: "host_cpus", Value: 4},
		},
	}
	got := map[string]float64{}
	for _, f := range stepEvidenceFigures(w) {
		got[f.Name] = f.Value
	}
	want := map[string]float64{
		"backend_commit_p99": 0.03, "leader_changes": 1, "client_cpu": 0.5, "host_cpu_busy": 0.8, "host_cpus": 4,
		"member0_cpu": 1.2, "member1_cpu": 0.4, "member_cores": 2, "proposals_pending_max": 40, "proposals_unapplied_max": 7, "peer_rtt_p99": 0.0004,
	}
	if !maps.Equal(got, want) {
		t.Fatalf("evidence figures\n got %v\nwant %v", got, want)
	}
}

func TestPresetAt(t *testing.T) {
	for rate, clients := range map[float64]int{100: 50, 150: 50, 151: 200, 5000: 500, 40000: 1000} {
		if p := presetAt(rate, time.Second); p.Clients != clients || p.Rate != rate || p.Duration != time.Second {
			t.Errorf("presetAt(%v) = %+v, want %d clients", rate, p, clients)
		}
	}
}

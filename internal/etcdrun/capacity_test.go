package etcdrun

import (
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

func TestLimitingResource(t *testing.T) {
	step := func(rate float64, failed string, leaders float64) result.CapacityStep {
		s := result.CapacityStep{Rate: rate, Status: verdict.Pass, SyncP99Ns: int64(3 * time.Millisecond),
			Extra: []result.Figure{{Name: "leader_changes", Value: leaders}, {Name: "backend_commit_p99", Value: 0.005}}}
		if failed != "" {
			s.Status, s.Failed = verdict.Fail, failed+": detail"
		}
		return s
	}
	for _, tc := range []struct {
		name  string
		steps []result.CapacityStep
		want  string
	}{
		{"none", []result.CapacityStep{step(100, "", 0)}, capacity.BendNone},
		{"disk", []result.CapacityStep{step(100, "", 0), step(400, "check_perf_slowest", 0), step(200, "wal_fsync_p99", 0)}, LimitDisk},
		{"leader", []result.CapacityStep{step(100, "", 0), step(200, "check_perf_throughput", 2)}, LimitLeader},
		{"cpu", []result.CapacityStep{step(100, "", 0), step(200, "check_perf_throughput", 0)}, LimitCPU},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, why := limitingResource(&result.Capacity{Steps: tc.steps})
			if got != tc.want || why == "" {
				t.Fatalf("limitingResource = %q (%s), want %q", got, why, tc.want)
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

func TestEstimate(t *testing.T) {
	for _, tc := range []struct {
		name      string
		disk, cpu result.Capacity
		want      string
		rate      float64
		upper     float64
	}{
		// A fast disk: the disk carried every rate tried, the CPUs fail
		// at 10,500/s.
		{"cpu", result.Capacity{Rate: 102000}, result.Capacity{Rate: 9600, Upper: 10500}, LimitCPU, 9600, 10500},
		// A rate-capped volume: the CPU side, swept up to the disk's
		// knee, passed every step.
		{"disk", result.Capacity{Rate: 50, Upper: 60, Bend: "rate-cap"}, result.Capacity{Rate: 50}, LimitDisk, 50, 60},
		// Both fail, the disk lower.
		{"disk lower", result.Capacity{Rate: 800, Upper: 900}, result.Capacity{Rate: 800, Upper: 900}, LimitDisk, 800, 900},
		// The CPUs lower than a disk with a knee.
		{"cpu lower", result.Capacity{Rate: 20000, Upper: 23000}, result.Capacity{Rate: 9600, Upper: 10500}, LimitCPU, 9600, 10500},
		{"none", result.Capacity{Rate: 102000}, result.Capacity{Rate: 102000}, capacity.BendNone, 102000, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := Estimate(&tc.disk, &tc.cpu)
			if e.LimitedBy != tc.want || e.Rate != tc.rate || e.Upper != tc.upper || e.Evidence == "" {
				t.Fatalf("Estimate = %+v, want %s at %v-%v", e, tc.want, tc.rate, tc.upper)
			}
			if e.DiskRate != tc.disk.Rate || e.CPURate != tc.cpu.Rate {
				t.Fatalf("Estimate's sides %+v", e)
			}
		})
	}
}

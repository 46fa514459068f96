package capacity

import (
	"strings"
	"testing"

	"etcdbench/internal/verdict"

	"etcdbench/internal/finding"
	"etcdbench/internal/result"
)

func TestEstimate(t *testing.T) {
	for _, tc := range []struct {
		name      string
		disk, cpu result.Capacity
		want      finding.Kind
		rate      float64
		upper     float64
	}{
		// A fast disk: the disk carried every rate tried, the CPUs fail
		// at 10,500/s.
		{"cpu", result.Capacity{Rate: 102000}, result.Capacity{Rate: 9600, Upper: 10500}, finding.CPU, 9600, 10500},
		// A rate-capped volume: the CPU side, swept up to the disk's
		// knee, passed every step.
		{"disk", result.Capacity{Rate: 50, Upper: 60, Bend: "rate-cap"}, result.Capacity{Rate: 50}, finding.Disk, 50, 60},
		// A busy machine's 2,000-IOPS volume: the etcd side passed the
		// rate the disk's model failed, and its answer stands.
		{"etcd passed the model's limit", result.Capacity{Rate: 673, Upper: 800, Bend: "stalls"}, result.Capacity{Rate: 800}, finding.None, 800, 0},
		// A busy machine where the model failed every rate it tried: the
		// etcd side failed the model's lowest failing rate and passed
		// below it.
		{"etcd passed where the model carried none", result.Capacity{Rate: 0, Upper: 375, Bend: "stalls"}, result.Capacity{Rate: 187, Upper: 375, Bend: finding.CPU}, finding.CPU, 187, 375},
		// Both fail, the disk lower.
		{"disk lower", result.Capacity{Rate: 800, Upper: 900}, result.Capacity{Rate: 800, Upper: 900}, finding.Disk, 800, 900},
		// The CPUs lower than a disk with a knee.
		{"cpu lower", result.Capacity{Rate: 20000, Upper: 23000}, result.Capacity{Rate: 9600, Upper: 10500}, finding.CPU, 9600, 10500},
		// The etcd side fails first on its own disk histograms: syncs and
		// CPU work together, named as its sweep named them.
		{"etcd side's disk", result.Capacity{Rate: 1600, Upper: 1900}, result.Capacity{Rate: 1200, Upper: 1345, Bend: finding.Disk}, finding.Disk, 1200, 1345},
		{"none", result.Capacity{Rate: 102000}, result.Capacity{Rate: 102000}, finding.None, 102000, 0},
		// A 5,000-IOPS cap (the zoo bench, 2026-11-26): the disk fails at
		// 8,400/s, the CPU side passed 4,800 and its ladder's next rung
		// was above the disk's limit. Only 4,800 is shown carried by both.
		{"cpu side short of the disk", result.Capacity{Rate: 7610, Upper: 8400}, result.Capacity{Rate: 4800}, finding.None, 4800, 8400},
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

// Without a disk model (check --quick) the estimate is the etcd side's,
// named as its sweep named its limit, and says the model did not run.
func TestEstimateWithoutDiskModel(t *testing.T) {
	for _, tc := range []struct {
		name string
		cpu  result.Capacity
		want finding.Kind
	}{
		{"cpu", result.Capacity{Rate: 4800, Upper: 6788, Bend: finding.CPU}, finding.CPU},
		{"the side's disk", result.Capacity{Rate: 1200, Upper: 1345, Bend: finding.Disk}, finding.Disk},
		{"unnamed", result.Capacity{Rate: 150, Upper: 178}, finding.CPU},
		{"nothing failed", result.Capacity{Rate: 15000}, finding.None},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := Estimate(nil, &tc.cpu)
			if !e.WithoutDiskModel || e.Rate != tc.cpu.Rate || e.Upper != tc.cpu.Upper || e.LimitedBy != tc.want {
				t.Fatalf("Estimate(nil) = %+v, want %s at %v-%v without the disk model", e, tc.want, tc.cpu.Rate, tc.cpu.Upper)
			}
			if e.CPURate != tc.cpu.Rate || e.DiskRate != 0 || !strings.Contains(e.Evidence, "the disk's model did not run") {
				t.Fatalf("Estimate(nil): sides %v/%v, evidence %q", e.CPURate, e.DiskRate, e.Evidence)
			}
		})
	}
}

// The side starts at the highest rung of capacity's ladder (150
// doubled) at most half of what a put load that met every rule carried,
// else at check perf's s.
func TestSeedStart(t *testing.T) {
	pass := verdict.Verdict{Check: "wal_fsync_p99", Status: verdict.Pass}
	fail := verdict.Verdict{Check: "wal_fsync_p99", Status: verdict.Fail}
	for _, tc := range []struct {
		name string
		put  result.Workload
		want float64
	}{
		{"quiet", result.Workload{OpsPerSec: 7914, Verdicts: []verdict.Verdict{pass, pass}}, 2400},
		{"just two rungs", result.Workload{OpsPerSec: 1200, Verdicts: []verdict.Verdict{pass}}, 600},
		{"slow", result.Workload{OpsPerSec: 250, Verdicts: []verdict.Verdict{pass}}, 150},
		{"failed", result.Workload{OpsPerSec: 7914, Verdicts: []verdict.Verdict{pass, fail}}, 150},
		{"not judged", result.Workload{OpsPerSec: 7914}, 150},
	} {
		if got := SeedStart(tc.put); got != tc.want {
			t.Errorf("%s: SeedStart = %v, want %v", tc.name, got, tc.want)
		}
	}
}

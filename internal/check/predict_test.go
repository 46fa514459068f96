package check

import (
	"math"
	"strings"
	"testing"
	"time"

	"etcdbench/internal/capacity"
	"etcdbench/internal/disk"
	"etcdbench/internal/etcdload/metrics"
	"etcdbench/internal/etcdload/observe"
	"etcdbench/internal/finding"
	"etcdbench/internal/result"
	"etcdbench/internal/stats"
	"etcdbench/internal/trace"
	"etcdbench/internal/verdict"
)

// lat is a latency whose p99 is p99.
func lat(name string, p99 time.Duration) result.Latency {
	return result.Latency{Name: name, Summary: stats.Summary{Count: 1000, Percentiles: []stats.Percentile{{P: 99, ValueNs: int64(p99)}}}}
}

func figure(t *testing.T, w result.Workload, name string) float64 {
	t.Helper()
	f := w.Figure(name)
	if f == nil {
		t.Fatalf("no figure %s in %+v", name, w.Figures)
	}
	return f.Value
}

func TestPredictTraced(t *testing.T) {
	m := Measured{Traced: &trace.WALSyncs{All: lat("", 4*time.Millisecond), WithoutCPUWait: lat("", 2*time.Millisecond)},
		Disk: disk.Measured{WALP99: time.Millisecond, WALUnderLoadP99: 2500 * time.Microsecond}}
	w, ok := Predict(m)
	if !ok {
		t.Fatal("no prediction from a traced put and both disk tests")
	}
	for name, want := range map[string]float64{
		"etcd_wal_fdatasync_p99":                   0.004,
		"disk_wal_p99":                             0.001,
		"ratio_etcd_to_disk_wal":                   4,
		"ratio_etcd_to_disk_wal_under_load":        1.6,
		"etcd_wal_fdatasync_without_cpu_wait_p99":  0.002,
		"ratio_etcd_without_cpu_wait_to_disk_test": 0.8, // against wal-under-load, which ran
	} {
		if got := figure(t, w, name); got < want*0.999 || got > want*1.001 {
			t.Errorf("%s = %g, want %g", name, got, want)
		}
	}
	// 2 ms of the 4 ms p99 was waiting for a CPU: said as contention.
	if n := strings.Join(w.Notes, " "); !strings.Contains(n, "CPU contention") || !strings.Contains(w.Parameters["real_source"].(string), "eBPF") {
		t.Errorf("notes %q / source %v: want the CPU contention named and the eBPF source", n, w.Parameters["real_source"])
	}
}

func TestPredictFromEtcdHistogram(t *testing.T) {
	// 100 WAL fsyncs in etcd's (4, 8] ms bucket: p99 7.96 ms, interpolated.
	h := metrics.Histogram{Count: 100, Buckets: []metrics.Bucket{{UpperBound: 0.004}, {UpperBound: 0.008, Count: 100}, {UpperBound: math.Inf(1), Count: 100}}}
	m := Measured{PutMembers: []observe.Member{{Target: observe.Target{Name: "member0"}, WALFsync: h}}, Disk: disk.Measured{WALP99: 2 * time.Millisecond}}
	w, ok := Predict(m)
	if !ok {
		t.Fatal("no prediction from etcd's histogram")
	}
	if got := figure(t, w, "ratio_etcd_to_disk_wal"); math.Abs(got-3.98) > 1e-9 {
		t.Errorf("ratio %g, want 3.98", got)
	}
	if w.Figure("ratio_etcd_to_disk_wal_under_load") != nil || w.Figure("etcd_wal_fdatasync_without_cpu_wait_p99") != nil {
		t.Error("figures of tests that did not run")
	}
	if !strings.Contains(w.Parameters["real_source"].(string), "1 ms buckets") {
		t.Errorf("source %v: want the histogram's coarseness said", w.Parameters["real_source"])
	}
}

func TestPredictNeedsBothSides(t *testing.T) {
	traced := &trace.WALSyncs{All: lat("", time.Millisecond)}
	wal := disk.Measured{WALP99: time.Millisecond}
	for name, m := range map[string]Measured{
		"no etcd":                    {Disk: wal},
		"no disk wal":                {Traced: traced},
		"an etcd without its figure": {Disk: wal, PutMembers: []observe.Member{{Target: observe.Target{Name: "member0"}}}},
	} {
		if _, ok := Predict(m); ok {
			t.Errorf("%s: a prediction", name)
		}
	}
}

func TestSummarize(t *testing.T) {
	ws := []result.Workload{{Name: "wal", Verdicts: []verdict.Verdict{v("wal_fsync_p99", verdict.Fail, 0.02, 0.01, "s")}, Latencies: []result.Latency{lat("fdatasync", 20*time.Millisecond)}}}
	s := Summarize(ws, Measured{}, false)
	if s.Name != "check" || len(s.Notes) < 2 || !strings.HasPrefix(s.Notes[0], "finding 1 (FAIL): slow disk") || !strings.HasPrefix(s.Notes[1], "what to do about finding 1:") {
		t.Errorf("summary %q: want finding 1 and what to do first", s.Notes)
	}
	if clean := Summarize([]result.Workload{{Name: "wal"}}, Measured{}, false); !strings.Contains(clean.Notes[0], "nothing failed or warned") {
		t.Errorf("clean summary %q", clean.Notes)
	}
}

// The check's summary says in one line what the disk carries.
func TestSummarizeCapacity(t *testing.T) {
	c := &result.Capacity{Rate: 2344, Upper: 5859, Unit: "writes/s", Confidence: 0.95, StepConfidence: 0.99, Decided: true,
		Marks: []result.CapacityMark{{Name: "s", Rate: 150, Carried: true}, {Name: "m", Rate: 1000, Carried: true}, {Name: "l", Rate: 8000}}}
	s := Summarize([]result.Workload{{Name: "wal"}, {Name: "capacity", Capacity: c}}, Measured{Disk: disk.Measured{Capacity: c}}, false)
	found := false
	for _, n := range s.Notes {
		if strings.HasPrefix(n, "disk capacity: the WAL carries 2344-5859 writes/s") && strings.Contains(n, "carries m, not l") {
			found = true
		}
	}
	if f := s.Figure("disk_capacity"); !found || f == nil || f.Value != 2344 {
		t.Errorf("summary notes %q, figure %+v: want the capacity line and figure", s.Notes, f)
	}
}

// With the etcd side, the summary's one line is capacity's estimate:
// the put rate an etcd carries, the check perf loads judged at it, the
// two sides as its evidence.
func TestSummarizeEstimate(t *testing.T) {
	marks := []result.CapacityMark{{Name: "s", Rate: 150, Carried: true}, {Name: "m", Rate: 1000, Carried: true}, {Name: "l", Rate: 8000, Carried: true}}
	c := &result.Capacity{Rate: 14700, Upper: 20000, Unit: "writes/s", Decided: true, Marks: marks}
	c.Etcd = capacity.Estimate(c, &result.Capacity{Rate: 3390, Upper: 4030, Bend: finding.CPU, Decided: true})
	s := Summarize([]result.Workload{{Name: "capacity", Capacity: c}}, Measured{Disk: disk.Measured{Capacity: c}}, false)
	want := "capacity: etcd on this disk and machine: 3390-4030 puts/s, limited by cpu; check perf loads: carries m, not l (the disk's model carries 14.7k-20k writes/s, an embedded etcd on this storage 3390-4030 puts/s)"
	if s.Notes[0] != want {
		t.Errorf("first note\n%q\nwant\n%q", s.Notes[0], want)
	}
	if f := s.Figure("etcd_capacity"); f == nil || f.Value != 3390 || s.Figure("disk_capacity") != nil {
		t.Errorf("figures %+v: want etcd_capacity alone", s.Figures)
	}
}

func TestCheckBudgetsBuild(t *testing.T) {
	for _, b := range Budgets() {
		if _, err := Workloads(b); err != nil {
			t.Errorf("budget %s: %v", b.Name, err)
		}
	}
}

// TestSummarizeInterrupted: an interrupted check never says the disk and
// etcd meet etcd's limits; it says what it did not check.
func TestSummarizeInterrupted(t *testing.T) {
	failing := result.Workload{Name: "wal", Verdicts: []verdict.Verdict{v("wal_fsync_p99", verdict.Fail, 0.02, 0.01, "s")}, Latencies: []result.Latency{lat("fdatasync", 20*time.Millisecond)}}
	for _, c := range []struct {
		name        string
		ws          []result.Workload
		interrupted bool
		want        string
	}{
		{"finished, nothing found", []result.Workload{{Name: "wal"}}, false, "finding: nothing failed or warned - this disk and an etcd on it meet etcd's limits"},
		{"interrupted, nothing found", []result.Workload{{Name: "wal"}}, true, "finding: none in what ran before the check was interrupted - no answer"},
		{"interrupted after a failure", []result.Workload{failing}, true, "the check was interrupted: the findings below are of what ran before"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := Summarize(c.ws, Measured{}, c.interrupted)
			if len(s.Notes) == 0 || !strings.HasPrefix(s.Notes[0], c.want) {
				t.Fatalf("notes %q, want the first to start %q", s.Notes, c.want)
			}
			for _, n := range s.Notes {
				if c.interrupted && strings.Contains(n, "meet etcd's limits") {
					t.Errorf("an interrupted check says %q", n)
				}
			}
		})
	}
}

// A sub-microsecond-scale p99 keeps its digits in the note, so that the
// ratio beside it reads true (1.4 µs was printed as 1 µs beside 5.69x).
func TestPredictNoteDigits(t *testing.T) {
	m := Measured{Disk: disk.Measured{WALP99: 1400 * time.Nanosecond}, Traced: &trace.WALSyncs{All: lat("", 7966*time.Nanosecond)}}
	w, ok := Predict(m)
	if !ok || !strings.Contains(w.Notes[0], "disk wal predicted 1.4µs (5.69x)") {
		t.Errorf("note %q: want 1.4µs beside 5.69x", w.Notes)
	}
}

// The check's put load beside four busy loops (check --quick on the
// development VM): etcd's histogram read 14.2 ms, the traced syncs 11 ms,
// 601 µs without their waits for a CPU. The finding is the CPU's, with
// its advice, not a slow disk's; a disk whose own part is over the limit
// stays the disk's.
func TestSummarizeCPUWaitExplains(t *testing.T) {
	th := verdict.Defaults()
	put := result.Workload{Name: "etcd-put", Verdicts: []verdict.Verdict{v(th.WALFsyncP99.ID, verdict.Fail, 0.0142, 0.01, "s")}}
	for _, tc := range []struct {
		name string
		own  time.Duration
		want finding.Kind
	}{
		{"the CPU wait", 601 * time.Microsecond, finding.CPU},
		{"the disk's own part", 12 * time.Millisecond, finding.Disk},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := Measured{PutLoad: "etcd-put", Traced: &trace.WALSyncs{All: lat("", 11*time.Millisecond), WithoutCPUWait: lat("", tc.own)}}
			w := Summarize([]result.Workload{put}, m, false)
			notes := strings.Join(w.Notes, "\n")
			name := tc.want.Info().Name
			if !strings.Contains(notes, "finding 1 (FAIL): "+name) {
				t.Fatalf("notes %q, want finding 1 %q", notes, name)
			}
			if faster := strings.Contains(notes, "faster disk of its own"); faster != (tc.want == finding.Disk) {
				t.Errorf("advice of a faster disk %v for %s: %q", faster, tc.want, notes)
			}
		})
	}
}

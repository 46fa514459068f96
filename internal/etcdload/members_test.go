package etcdload

import (
	"context"
	"testing"
	"time"

	"etcdbench/internal/etcdcluster"
	"etcdbench/internal/etcdload/metrics"
	"etcdbench/internal/result"
	"etcdbench/internal/units"
	"etcdbench/internal/verdict"
)

func families(t *testing.T, text string) metrics.Families {
	t.Helper()
	f, err := metrics.Parse([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestCPUFigures(t *testing.T) {
	before := families(t, "# TYPE process_cpu_seconds_total counter\nprocess_cpu_seconds_total 10.5\n")
	after := families(t, "# TYPE process_cpu_seconds_total counter\nprocess_cpu_seconds_total 13.5\n# TYPE go_sched_gomaxprocs_threads gauge\ngo_sched_gomaxprocs_threads 2\n")
	for _, c := range []struct {
		name          string
		before, after metrics.Families
		window        time.Duration
		cpu, cores    float64 // 0: no figure
	}{
		{"both", before, after, 2 * time.Second, 1.5, 2},
		{"no window", before, after, 0, 0, 2},
		{"restarted", after, before, time.Second, 0, 0},
		{"no metrics", families(t, ""), families(t, ""), time.Second, 0, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := result.Workload{Figures: cpuFigures("member1", c.before, c.after, c.window)}
			for _, want := range []struct {
				name string
				v    float64
			}{{"member1_cpu", c.cpu}, {"member1_cores", c.cores}} {
				f := w.Figure(want.name)
				switch {
				case want.v == 0 && f != nil:
					t.Errorf("%s = %v, want none", want.name, f.Value)
				case want.v != 0 && (f == nil || f.Value != want.v):
					t.Errorf("%s = %+v, want %v", want.name, f, want.v)
				}
			}
		})
	}
}

func TestBacklogObserve(t *testing.T) {
	var b backlog
	b.observe(families(t, "etcd_server_proposals_pending 7\netcd_server_proposals_committed_total 120\netcd_server_proposals_applied_total 100\n"))
	b.observe(families(t, "etcd_server_proposals_pending 3\netcd_server_proposals_committed_total 200\netcd_server_proposals_applied_total 195\n"))
	b.observe(families(t, "process_cpu_seconds_total 1\n")) // not a member: no sample
	if b != (backlog{pending: 7, unapplied: 20, samples: 2}) {
		t.Fatalf("backlog %+v, want the largest of each over 2 samples", b)
	}
}

// A member in a process of its own, as every command runs it: its CPU,
// cores and proposal backlog come out of its /metrics, the load
// generator's CPU and the machine's from this process and /proc/stat.
func TestBenchMemberEvidence(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := etcdcluster.Start(ctx, etcdcluster.Options{Dir: t.TempDir(), OwnProcess: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	l := DefaultLoad(OpPut)
	l.Client.Endpoints, l.RunID = c.Endpoints(), uniqueID(t)
	l.Total, l.Clients, l.Rate = 0, 8, 400
	l.Duration = 1500 * time.Millisecond
	out, err := Bench(ctx, l, BenchOptions{Targets: EmbeddedTargets(c.MetricsURLs()), Thresholds: verdict.Defaults(), Sample: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	w := out.Workload
	positive := func(name string, most float64) {
		t.Helper()
		if f := w.Figure(name); f == nil || !(f.Value > 0 && f.Value <= most) {
			t.Errorf("%s = %+v, want in (0, %v]", name, f, most)
		}
	}
	host := w.Figure(HostCPUs)
	if host == nil || host.Value < 1 {
		t.Fatalf("%s = %+v", HostCPUs, host)
	}
	positive("member0_cpu", host.Value)
	positive("member0_cores", host.Value)
	positive(HostCPUBusy, 1)
	positive("member0_backlog_samples", 10)
	for _, name := range []string{"member0_proposals_pending_max", "member0_proposals_unapplied_max"} {
		if f := w.Figure(name); f == nil || f.Value < 0 || f.Value > 600 {
			t.Errorf("%s = %+v, want a count within the load's puts", name, f)
		}
	}
	for _, f := range w.Figures {
		t.Logf("%s %s", f.Name, units.FormatValue(f.Value, f.Unit))
	}
	if p := w.Process; p == nil || p.UserNs+p.SystemNs <= 0 {
		t.Errorf("the load generator's CPU: %+v", p)
	}
}

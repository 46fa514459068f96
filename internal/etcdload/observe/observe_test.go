package observe

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"etcdbench/internal/etcdload/metrics"
	"etcdbench/internal/result"
)

func families(t *testing.T, text string) metrics.Families {
	t.Helper()
	f, err := metrics.Parse([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func same(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) }

func TestObserveCPU(t *testing.T) {
	before := families(t, "# TYPE process_cpu_seconds_total counter\nprocess_cpu_seconds_total 10.5\n")
	after := families(t, "# TYPE process_cpu_seconds_total counter\nprocess_cpu_seconds_total 13.5\n# TYPE go_sched_gomaxprocs_threads gauge\ngo_sched_gomaxprocs_threads 2\n")
	nan := math.NaN()
	for _, c := range []struct {
		name          string
		before, after metrics.Families
		window        time.Duration
		cpu, cores    float64
	}{
		{"both", before, after, 2 * time.Second, 1.5, 2},
		{"no window", before, after, 0, nan, 2},
		{"restarted", after, before, time.Second, nan, nan},
		{"no metrics", families(t, ""), families(t, ""), time.Second, nan, nan},
	} {
		t.Run(c.name, func(t *testing.T) {
			var m Member
			observeOthers(&m, c.before, c.after, c.window)
			if !same(m.CPU, c.cpu) || !same(m.Cores, c.cores) {
				t.Errorf("cpu %v cores %v, want %v %v", m.CPU, m.Cores, c.cpu, c.cores)
			}
		})
	}
}

func TestObserveCounters(t *testing.T) {
	before := families(t, "# TYPE etcd_server_leader_changes_seen_total counter\netcd_server_leader_changes_seen_total 1\n")
	after := families(t, "# TYPE etcd_server_leader_changes_seen_total counter\netcd_server_leader_changes_seen_total 3\n# TYPE etcd_mvcc_db_total_size_in_bytes gauge\netcd_mvcc_db_total_size_in_bytes 4096\n")
	var m Member
	observeOthers(&m, before, after, time.Second)
	if m.LeaderChanges != 2 || m.DBSize != 4096 || !math.IsNaN(m.SlowApplies) || !math.IsNaN(m.ApplyP99) || !math.IsNaN(m.LateHeartbeats) {
		t.Errorf("member %+v: want 2 leader changes, a 4096 B db, no slow applies or apply p99", m)
	}
}

func TestBacklogObserve(t *testing.T) {
	var b Backlog
	b.observe(families(t, "etcd_server_proposals_pending 7\netcd_server_proposals_committed_total 120\netcd_server_proposals_applied_total 100\n"))
	b.observe(families(t, "etcd_server_proposals_pending 3\netcd_server_proposals_committed_total 200\netcd_server_proposals_applied_total 195\n"))
	b.observe(families(t, "process_cpu_seconds_total 1\n")) // not a member: no sample
	if b != (Backlog{Pending: 7, Unapplied: 20, Samples: 2}) {
		t.Fatalf("backlog %+v, want the largest of each over 2 samples", b)
	}
}

func TestFigures(t *testing.T) {
	nan := math.NaN()
	m := Member{Target: Target{Name: "member0"}, WALFsync: metrics.DiskHistogram(0, 0, 0, 50, 50), BackendCommit: metrics.DiskHistogram(),
		ApplyP99: nan, PeerRTTP99: nan, LeaderChanges: 0, LateHeartbeats: 2, SlowApplies: nan, DBSize: nan, CPU: 0.5, Cores: nan,
		Backlog: Backlog{Pending: 3, Unapplied: 1, Samples: 4}}
	w := result.Workload{Figures: Figures([]Member{m})}
	want := map[string]float64{"member0_wal_fsyncs": 100, "member0_wal_fsync_p50": 0.008, "member0_wal_fsync_p99": 0.01584,
		"member0_backend_commits": 0, "member0_cpu": 0.5, "member0_leader_changes": 0, "member0_late_heartbeats": 2,
		"member0_proposals_pending_max": 3, "member0_proposals_unapplied_max": 1, "member0_backlog_samples": 4}
	for name, v := range want {
		if f := w.Figure(name); f == nil || math.Abs(f.Value-v) > 1e-12 {
			t.Errorf("%s = %+v, want %v", name, f, v)
		}
	}
	for _, name := range []string{"member0_backend_commit_p99", "member0_cores", "member0_slow_applies", "member0_apply_p99", "member0_db_size"} {
		if f := w.Figure(name); f != nil {
			t.Errorf("%s = %v: a figure the member did not give is reported", name, f.Value)
		}
	}
	if len(w.Figures) != len(want) {
		t.Errorf("%d figures, want %d: %+v", len(w.Figures), len(want), w.Figures)
	}
	if got := HostFigures(&Host{Busy: 0.25, CPUs: 2}); len(got) != 2 || got[0].Name != HostCPUBusyFigure || got[1].Value != 2 {
		t.Errorf("host figures %+v", got)
	}
	if HostFigures(nil) != nil {
		t.Error("figures of a host not measured")
	}
}

func TestExternalTargets(t *testing.T) {
	ts := ExternalTargets([]string{"http://10.0.0.1:2379/", "10.0.0.2:2379"})
	if len(ts) != 2 || ts[0].URL != "http://10.0.0.1:2379/metrics" || ts[1].URL != "http://10.0.0.2:2379/metrics" || ts[1].Name != "member1" {
		t.Errorf("targets %+v", ts)
	}
}

func TestWithScheme(t *testing.T) {
	got, err := WithScheme([]string{"a:2379", "https://b:2379", "http://c:2379", ""}, false)
	if err != nil || strings.Join(got, " ") != "http://a:2379 https://b:2379 http://c:2379 " {
		t.Errorf("without TLS: %q, %v", got, err)
	}
	got, err = WithScheme([]string{"a:2379", "https://b:2379"}, true)
	if err != nil || strings.Join(got, " ") != "https://a:2379 https://b:2379" {
		t.Errorf("with TLS: %q, %v", got, err)
	}
	var ph *PlainHTTPError
	if _, err = WithScheme([]string{"a:2379", "http://c:2379"}, true); !errors.As(err, &ph) || ph.URL != "http://c:2379" {
		t.Errorf("plain HTTP with TLS: %v, want a PlainHTTPError with the URL", err)
	}
}

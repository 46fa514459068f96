package main

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"time"

	"etcdbench/internal/etcdcluster"
	"etcdbench/internal/result"
)

func TestEtcdPutEmbedded(t *testing.T) {
	dir := t.TempDir()
	res := runBin(t, runOpts{}, "etcd", "put", "--dir", dir, "--total", "300", "--clients", "4", "--conns", "2", "-o", "json", "--no-progress")
	if res.code != exitOK && res.code != exitFail {
		t.Fatalf("exit %d, want 0 or 1; stderr:\n%s", res.code, res.stderr)
	}
	r, err := result.Read(strings.NewReader(res.stdout))
	if err != nil {
		t.Fatalf("stdout is not a result: %v\n%s", err, res.stdout)
	}
	if len(r.Workloads) != 1 {
		t.Fatalf("%d workloads, want 1", len(r.Workloads))
	}
	w := r.Workloads[0]
	if w.Name != "etcd-put" || w.Ops != 300 || w.Latency("request") == nil {
		t.Errorf("workload %s with %d ops, latency %v: want etcd-put, 300 and a request latency", w.Name, w.Ops, w.Latency("request"))
	}
	if w.Figure("member0_wal_fsyncs") == nil || len(w.Verdicts) == 0 {
		t.Errorf("no disk metrics from the embedded etcd: figures %+v, verdicts %+v", w.Figures, w.Verdicts)
	}
	if r.Status == nil || (*r.Status == 2) != (res.code == exitFail) {
		t.Errorf("status %v does not match exit %d", r.Status, res.code)
	}
	checkNoScratch(t, dir)
}

func TestEtcdBadInput(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name string
		args []string
		want string // in the error line
	}{
		{"no workload", []string{"etcd"}, "missing workload"},
		{"unknown workload", []string{"etcd", "lease", "--dir", dir}, "unknown etcd workload"},
		{"txn without puts", []string{"etcd", "txn", "--dir", dir, "--txn-ops", "0"}, "txn ops"},
		{"txn wider than keys", []string{"etcd", "txn", "--dir", dir, "--txn-ops", "3"}, "key space"},
		{"read ratio", []string{"etcd", "mixed", "--dir", dir, "--read-ratio", "1.5"}, "read ratio"},
		{"read ratio on put", []string{"etcd", "put", "--dir", dir, "--read-ratio", "0.5"}, "read-ratio"},
		{"no watchers", []string{"etcd", "watch", "--dir", dir, "--watchers-per-stream", "0"}, "watchers"},
		{"watch value too short", []string{"etcd", "watch", "--dir", dir, "--val-size", "4"}, "send time"},
		{"bad target", []string{"etcd", "put", "--dir", dir, "--target", "followers"}, "target"},
		{"no dir", []string{"etcd", "put"}, "--dir is required"},
		{"dir and endpoints", []string{"etcd", "put", "--dir", dir, "--endpoints", "http://127.0.0.1:1"}, "alternatives"},
		{"members", []string{"etcd", "put", "--dir", dir, "--members", "2"}, "--members"},
		{"election under 5 heartbeats", []string{"etcd", "put", "--dir", dir, "--heartbeat-interval", "100ms", "--election-timeout", "300ms"}, "5 x --heartbeat-interval"},
		// Bare numbers are milliseconds, as etcd's flags (as seconds, 300
		// would be over etcd's 50 s maximum instead).
		{"bare milliseconds", []string{"etcd", "put", "--dir", dir, "--heartbeat-interval", "100", "--election-timeout", "300"}, "election-timeout 300 ms < 5 x heartbeat-interval 100 ms"},
		{"heartbeat over a fifth of etcd's default election", []string{"etcd", "put", "--dir", dir, "--heartbeat-interval", "300ms"}, "(etcd's default)"},
		{"peer round trip with one member", []string{"etcd", "put", "--dir", dir, "--peer-rtt", "50ms"}, "give 3 members"},
		{"negative peer round trip", []string{"etcd", "put", "--dir", dir, "--members", "3", "--peer-rtt", "-5ms"}, "--peer-rtt"},
		{"unparsable peer round trip", []string{"etcd", "put", "--dir", dir, "--members", "3", "--peer-rtt", "far"}, "--peer-rtt"},
		{"a member out of range", []string{"etcd", "put", "--dir", dir, "--members", "3", "--peer-rtt", "m4=40ms"}, "N from 1 to 3"},
		{"a list of round trips", []string{"etcd", "put", "--dir", dir, "--members", "3", "--peer-rtt", "2ms,50ms"}, "a row each in capacity and etcd capacity"},
		{"jitter over the round trip", []string{"etcd", "put", "--dir", dir, "--members", "3", "--peer-rtt", "5ms", "--peer-jitter", "10ms"}, "at most the round trip"},
		{"consistency on put", []string{"etcd", "put", "--dir", dir, "--consistency", "s"}, "consistency"},
		{"bad consistency", []string{"etcd", "range", "--dir", dir, "--consistency", "x"}, "consistency"},
		{"endless", []string{"etcd", "put", "--dir", dir, "--total", "0"}, "would not end"},
		{"bad duration", []string{"etcd", "put", "--dir", dir, "--duration", "soon"}, "--duration"},
		{"bad output", []string{"etcd", "put", "--dir", dir, "-o", "xml"}, "--output"},
		{"key too short", []string{"etcd", "put", "--dir", dir, "--key-size", "1", "--key-space-size", "100"}, "key size"},
		{"bad quota", []string{"etcd", "put", "--dir", dir, "--quota-backend-bytes", "lots"}, "quota"},
		{"missing dir", []string{"etcd", "put", "--dir", dir + "/nope"}, "does not exist"},
		{"external without --yes", []string{"etcd", "put", "--endpoints", "http://127.0.0.1:1", "--total", "50"}, "without --yes"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := runBin(t, runOpts{}, tc.args...)
			if res.code != exitUsage {
				t.Errorf("exit %d, want %d; stderr:\n%s", res.code, exitUsage, res.stderr)
			}
			checkOneErrorLine(t, res.stderr)
			if !strings.Contains(res.stderr, tc.want) {
				t.Errorf("stderr %q does not mention %q", res.stderr, tc.want)
			}
		})
	}
	checkNoScratch(t, dir)
}

func TestEtcdInterrupted(t *testing.T) {
	dir := t.TempDir()
	p := start(t, runOpts{}, "etcd", "put", "--dir", dir, "--duration", "60s", "--clients", "4", "--no-progress")
	sd := waitScratch(t, p, dir)
	waitLoadInWAL(t, p, sd)
	p.signal(t, syscall.SIGINT)
	res := p.wait(t)
	if res.code != 130 {
		t.Errorf("exit %d, want 130; stderr:\n%s", res.code, res.stderr)
	}
	checkOneErrorLine(t, res.stderr)
	checkNoScratch(t, dir)
}

func TestEtcdExternal(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := etcdcluster.Start(ctx, etcdcluster.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatalf("starting an etcd to test against: %v", err)
	}
	defer c.Close()
	eps := strings.Join(c.Endpoints(), ",")
	res := runBin(t, runOpts{}, "etcd", "range", "--endpoints", eps, "--yes", "--total", "200", "--key-space-size", "10", "-o", "json")
	if res.code != exitOK && res.code != exitFail {
		t.Fatalf("exit %d; stderr:\n%s", res.code, res.stderr)
	}
	r, err := result.Read(strings.NewReader(res.stdout))
	if err != nil {
		t.Fatalf("stdout is not a result: %v", err)
	}
	w := r.Workloads[0]
	if w.Name != "etcd-range" || w.Ops != 200 || w.Figure("member0_wal_fsyncs") == nil {
		t.Errorf("workload %s, %d ops, figures %+v", w.Name, w.Ops, w.Figures)
	}
	checkNoKeys(ctx, t, c.Endpoints())
}

// TestEtcdWorkloads runs every load kind but put against the embedded
// etcd and checks each result's own figures.
func TestEtcdWorkloads(t *testing.T) {
	cases := []struct {
		name      string
		args      []string
		ops       int64
		latencies []string
		figure    string
	}{
		{"txn", []string{"--total", "200", "--txn-ops", "4", "--key-space-size", "20"}, 200, []string{"request"}, "member0_wal_fsyncs"},
		{"mixed", []string{"--total", "300", "--read-ratio", "0.5", "--clients", "4"}, 300, []string{"request", "range", "put"}, "member0_wal_fsyncs"},
		{"watch", []string{"--total", "50", "--rate", "500", "--streams", "2", "--watchers-per-stream", "5"}, 500, []string{"event", "put"}, "events_missed"},
		{"range", []string{"--total", "100", "--target", "leader", "--compact-after", "--defrag-after", "--members", "3"}, 100, []string{"request"}, "member2_db_size_after_defrag"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			args := append([]string{"etcd", tc.name, "--dir", dir, "-o", "json", "--no-progress"}, tc.args...)
			res := runBin(t, runOpts{}, args...)
			if res.code != exitOK && res.code != exitFail {
				t.Fatalf("exit %d, want 0 or 1; stderr:\n%s", res.code, res.stderr)
			}
			r, err := result.Read(strings.NewReader(res.stdout))
			if err != nil {
				t.Fatalf("stdout is not a result: %v\n%s", err, res.stdout)
			}
			w := r.Workloads[0]
			if w.Name != "etcd-"+tc.name || w.Ops != tc.ops {
				t.Errorf("workload %s with %d ops, want etcd-%s with %d", w.Name, w.Ops, tc.name, tc.ops)
			}
			for _, l := range tc.latencies {
				if w.Latency(l) == nil {
					t.Errorf("no %q latency", l)
				}
			}
			if w.Figure(tc.figure) == nil {
				t.Errorf("no figure %s among %+v", tc.figure, w.Figures)
			}
			checkNoScratch(t, dir)
		})
	}
}

package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"etcdbench/internal/result"
	"etcdbench/internal/testutil"
)

// tuneArgs is a tiny tune of two values of one setting, one round each.
func tuneArgs(dir string, more ...string) []string {
	return append([]string{"tune", "--dir", dir, "--vary", "backend-batch-limit=100,10000", "--rounds", "1", "--total", "300", "--clients", "4", "--no-progress"}, more...)
}

func TestTuneJSON(t *testing.T) {
	dir, saveDir := t.TempDir(), t.TempDir()
	res := runBin(t, runOpts{}, tuneArgs(dir, "-o", "json", "--save-dir", saveDir)...)
	if res.code != exitOK && res.code != exitFail {
		t.Fatalf("exit %d, want 0 or 1; stderr:\n%s", res.code, res.stderr)
	}
	r, err := result.Read(strings.NewReader(res.stdout))
	if err != nil {
		t.Fatalf("stdout is not a result: %v\n%s", err, res.stdout)
	}
	if len(r.Workloads) != 3 {
		t.Fatalf("%d workloads, want 2 runs and the summary", len(r.Workloads))
	}
	for i, want := range []struct{ id, limit string }{{"c1", "100"}, {"c2", "10000"}} {
		w := r.Workloads[i]
		settings, _ := w.Parameters["tune_settings"].(map[string]any)
		if w.Name != "etcd-put" || w.Ops != 300 || w.Parameters["tune_combination"] != want.id || settings["backend-batch-limit"] != want.limit {
			t.Errorf("run %d: workload %s, %d ops, parameters %v: want etcd-put, 300 ops, %s with backend-batch-limit %s", i+1, w.Name, w.Ops, w.Parameters, want.id, want.limit)
		}
		if w.Parameters["tune_round"] != float64(1) || w.Parameters["tune_order"] != float64(i+1) {
			t.Errorf("run %d: round %v, order %v", i+1, w.Parameters["tune_round"], w.Parameters["tune_order"])
		}
		if w.Figure("member0_wal_fsyncs") == nil || w.Figure("member0_backend_commits") == nil || len(w.Verdicts) == 0 {
			t.Errorf("run %d has no member figures or verdicts: %+v", i+1, w.Figures)
		}
	}
	sum := r.Workloads[2]
	if sum.Name != "tune" || sum.Ops != 2 {
		t.Errorf("summary workload %s with %d runs, want tune with 2", sum.Name, sum.Ops)
	}
	for _, name := range []string{"c1_throughput_median", "c2_throughput_median", "c1_latency_p99_median", "c2_wal_fsync_p99_max"} {
		if f := sum.Figure(name); f == nil || f.Value <= 0 {
			t.Errorf("summary figure %s is %+v, want a positive value", name, f)
		}
	}
	if f := sum.Figure("c1_throughput_median"); f != nil && f.Value != r.Workloads[0].OpsPerSec {
		t.Errorf("one round's median throughput %v is not the run's %v", f.Value, r.Workloads[0].OpsPerSec)
	}
	if r.Status == nil || (*r.Status == 2) != (res.code == exitFail) {
		t.Errorf("status %v does not match exit %d", r.Status, res.code)
	}

	saved, err := filepath.Glob(filepath.Join(saveDir, "tune-*.json"))
	if err != nil || len(saved) != 2 {
		t.Fatalf("saved runs %v (%v), want 2", saved, err)
	}
	for _, p := range saved {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		sr, err := result.Read(f)
		f.Close()
		if err != nil || len(sr.Workloads) != 1 {
			t.Fatalf("%s: %v, %d workloads", p, err, len(sr.Workloads))
		}
		id, _ := sr.Workloads[0].Parameters["tune_combination"].(string)
		if !strings.Contains(filepath.Base(p), "-"+id+"-r1-backend-batch-limit_") {
			t.Errorf("%s holds combination %q", p, id)
		}
	}
	// The saved runs are what compare reads: c1 against c2.
	cmp := runBin(t, runOpts{}, append([]string{"compare"}, saved...)...)
	if cmp.code != exitOK || !strings.Contains(cmp.stdout, "etcd-put") || !strings.Contains(cmp.stdout, "member0_wal_fsync") {
		t.Errorf("compare of the saved runs: exit %d\n%s%s", cmp.code, cmp.stdout, cmp.stderr)
	}
	checkNoScratch(t, dir)
}

func TestTuneText(t *testing.T) {
	dir := t.TempDir()
	res := runBin(t, runOpts{}, tuneArgs(dir)...)
	if res.code != exitOK && res.code != exitFail {
		t.Fatalf("exit %d, want 0 or 1; stderr:\n%s", res.code, res.stderr)
	}
	for _, want := range []string{
		"etcdbench tune: etcd-put, 4 clients",
		"2 combinations x 1 round(s), alternating: r1 c1 c2",
		"c1  backend-batch-limit=100\n",
		"c2  backend-batch-limit=10000\n",
		"throughput (ops/s)", "latency p99", "WAL fsync p99", "backend commit p99", "leader changes", "verdicts",
		"no difference can be told from the noise",
	} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("report lacks %q:\n%s", want, res.stdout)
		}
	}
	// Each combination's row: its id, 1 run, and a figure in every
	// column (none missing).
	for _, id := range []string{"c1", "c2"} {
		var row string
		for _, l := range strings.Split(res.stdout, "\n") {
			if strings.HasPrefix(l, id+"  1  ") {
				row = l
			}
		}
		if row == "" || strings.Contains(row, " - ") {
			t.Errorf("row of %s is missing or has an empty cell: %q\n%s", id, row, res.stdout)
		}
	}
	if res.stderr != "" {
		t.Errorf("stderr is not empty:\n%s", res.stderr)
	}
	checkNoScratch(t, dir)
}

func TestTuneBadInput(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name string
		args []string
		want string // in the error line
	}{
		{"nothing varied", []string{"tune", "--dir", dir}, "nothing to vary"},
		{"unknown setting", []string{"tune", "--dir", dir, "--vary", "snapshots=1,2"}, `unknown setting "snapshots"`},
		{"no equals", []string{"tune", "--dir", dir, "--vary", "snapshot-count"}, "NAME=v1,v2"},
		{"empty values", []string{"tune", "--dir", dir, "--vary", "snapshot-count="}, "no values"},
		{"empty value", []string{"tune", "--dir", dir, "--vary", "snapshot-count=1,,2"}, "empty value"},
		{"varied twice", []string{"tune", "--dir", dir, "--vary", "snapshot-count=1,2", "--vary", "snapshot-count=3"}, "varied twice"},
		{"one combination", []string{"tune", "--dir", dir, "--vary", "members=3"}, "at least two combinations"},
		{"election below 5 x heartbeat", []string{"tune", "--dir", dir, "--vary", "heartbeat-interval=100,300"},
			"etcd refuses --election-timeout below 5 x --heartbeat-interval: election-timeout 1000 ms (etcd's default) < 5 x heartbeat-interval 300 ms (etcd server/embed/config.go (*Config).Validate"},
		{"election over etcd's max", []string{"tune", "--dir", dir, "--vary", "election-timeout=1000,60000"}, "maxElectionMs = 50000"},
		{"heartbeat fraction", []string{"tune", "--dir", dir, "--vary", "heartbeat-interval=100,100.5ms"}, "whole milliseconds"},
		{"snapshot-count 0", []string{"tune", "--dir", dir, "--vary", "snapshot-count=0,1000"}, "DefaultSnapshotCount"},
		{"members 2", []string{"tune", "--dir", dir, "--vary", "members=1,2"}, "members=2"},
		{"missing vary dir", []string{"tune", "--vary", "dir=" + dir + "," + dir + "/nope"}, "does not exist"},
		{"no dir", []string{"tune", "--vary", "snapshot-count=1,2"}, "--dir is required"},
		{"missing dir", []string{"tune", "--dir", dir + "/nope", "--vary", "snapshot-count=1,2"}, "does not exist"},
		{"dir twice", []string{"tune", "--dir", dir, "--vary", "dir=" + dir + "," + os.TempDir()}, "--dir and --vary dir are alternatives"},
		{"clients twice", []string{"tune", "--dir", dir, "--clients", "4", "--vary", "clients=1,2"}, "alternatives"},
		{"watch", []string{"tune", "--dir", dir, "--workload", "watch", "--vary", "clients=1,2"}, "--workload"},
		{"txn-ops on put", []string{"tune", "--dir", dir, "--txn-ops", "2", "--vary", "clients=1,2"}, "--txn-ops"},
		{"load refused", []string{"tune", "--dir", dir, "--workload", "txn", "--txn-ops", "4", "--vary", "clients=1,2"}, "key space"},
		{"rounds 0", []string{"tune", "--dir", dir, "--rounds", "0", "--vary", "clients=1,2"}, "--rounds 0"},
		{"bad save dir", []string{"tune", "--dir", dir, "--save-dir", dir + "/nope", "--vary", "clients=1,2"}, "--save-dir"},
		{"bad output", []string{"tune", "--dir", dir, "-o", "xml", "--vary", "clients=1,2"}, "--output"},
		{"bad duration", []string{"tune", "--dir", dir, "--duration", "soon", "--vary", "clients=1,2"}, "--duration"},
		{"unknown flag", []string{"tune", "--dir", dir, "--snapshot-count", "5", "--vary", "clients=1,2"}, "unknown flag"},
		{"argument", []string{"tune", "--dir", dir, "--vary", "clients=1,2", "now"}, "unexpected argument"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := runBin(t, runOpts{}, tc.args...)
			if res.code != exitUsage {
				t.Errorf("exit %d, want %d; stderr:\n%s", res.code, exitUsage, res.stderr)
			}
			checkOneErrorLine(t, res.stderr)
			if !strings.Contains(res.stderr, tc.want) {
				t.Errorf("stderr %q does not say %q", res.stderr, tc.want)
			}
			if res.stdout != "" {
				t.Errorf("stdout is not empty: %q", res.stdout)
			}
		})
	}
	checkNoScratch(t, dir)
}

func TestTuneInterrupted(t *testing.T) {
	dir := t.TempDir()
	p := start(t, runOpts{}, "tune", "--dir", dir, "--vary", "backend-batch-limit=100,10000", "--duration", "60s", "--clients", "4", "--no-progress")
	sd := waitScratch(t, p, dir)
	waitLoadInWAL(t, p, sd) // into the first run's load
	p.signal(t, syscall.SIGINT)
	if !testutil.Poll(60*time.Second, p.exited) {
		// A hang after the interrupt: the Go runtime's goroutine dump
		// says where.
		p.signal(t, syscall.SIGQUIT)
		res := p.wait(t)
		t.Fatalf("still running 60 s after SIGINT; goroutines:\n%s", res.stderr)
	}
	res := p.wait(t)
	if res.code != 130 {
		t.Errorf("exit %d, want 130; stderr:\n%s", res.code, res.stderr)
	}
	checkOneErrorLine(t, res.stderr)
	// A run interrupted before its load produced anything leaves no
	// report; one interrupted during the load gives the (empty) table.
	if res.stdout != "" && !strings.Contains(res.stdout, "Interrupted: 0 of 6 runs finished") {
		t.Errorf("report does not say it was interrupted:\n%s", res.stdout)
	}
	checkNoScratch(t, dir)
}

// tune of three members apart: every run kills its leader after the
// load, and the table shows, beside leader changes, the late heartbeats
// and the time to a new leader (about the 500 ms election timeout to
// twice it, with the round trips of the vote).
func TestTuneMembersApart(t *testing.T) {
	dir := t.TempDir()
	res := runBin(t, runOpts{}, "tune", "--dir", dir, "--vary", "members=3", "--vary", "peer-rtt=0,30ms", "--vary", "heartbeat-interval=50",
		"--vary", "election-timeout=500", "--rounds", "1", "--total", "100", "--clients", "4", "--no-progress", "-o", "json")
	if res.code != exitOK && res.code != exitFail {
		t.Fatalf("exit %d; stderr:\n%s", res.code, res.stderr)
	}
	r, err := result.Read(strings.NewReader(res.stdout))
	if err != nil {
		t.Fatal(err)
	}
	sum := r.Workloads[len(r.Workloads)-1]
	for _, c := range []string{"c1", "c2"} {
		f := sum.Figure(c + "_failover_median")
		if f == nil || f.Value < 0.4 || f.Value > 5 {
			t.Errorf("%s's time to a new leader: %+v, want 0.4-5 s", c, f)
		}
		if f := sum.Figure(c + "_late_heartbeats_max"); f == nil {
			t.Errorf("%s has no late heartbeats figure", c)
		}
	}
	for _, w := range r.Workloads[:len(r.Workloads)-1] {
		if w.Figure("failover_seconds") == nil {
			t.Errorf("run %v has no failover_seconds: %v", w.Parameters["tune_combination"], w.Notes)
		}
	}
	checkNoScratch(t, dir)
	if left := memberPIDs(t, dir); len(left) > 0 {
		t.Errorf("member processes %v still run", left)
	}
}

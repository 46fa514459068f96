package main

import (
	"strings"
	"testing"

	"etcdbench/internal/result"
	"etcdbench/internal/verdict"
)

func TestEtcdCheckEmbedded(t *testing.T) {
	dir := t.TempDir()
	res := runBin(t, runOpts{}, "etcd", "check", "--load", "s", "--duration", "5s", "--dir", dir, "-o", "json", "--no-progress")
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
	if w.Name != "etcd-check-s" || w.Parameters["load"] != "s" {
		t.Errorf("workload %s, load %v: want etcd-check-s, s", w.Name, w.Parameters["load"])
	}
	// 150 puts/s for 5 s: 750 due, each done, failed or left unsent.
	// unsent_requests is there only when some were not sent.
	failed, unsent := w.Figure("failed_requests"), 0.0
	if f := w.Figure("unsent_requests"); f != nil {
		unsent = f.Value
	}
	if failed == nil || w.Ops+int64(failed.Value+unsent) != 750 {
		t.Errorf("%d puts, failed %+v, unsent %g: want 750 in all", w.Ops, failed, unsent)
	}
	// An open loop cannot run ahead of its schedule; behind it by half
	// only on a machine too loaded to test anything.
	if w.OpsPerSec > 151 || w.OpsPerSec < 75 {
		t.Errorf("%.1f puts/s, want about 150", w.OpsPerSec)
	}
	lat := w.Latency("request")
	if lat == nil || lat.Count != w.Ops || len(lat.Percentiles) != 4 || lat.MaxNs < lat.Percentiles[3].ValueNs {
		t.Errorf("latency %+v: want the puts' p50/p90/p99/p99.9 and max", lat)
	}
	if len(w.Series) < 5 {
		t.Errorf("%d seconds in the series, want at least 5", len(w.Series))
	}
	want := map[string]struct {
		limit float64
		cmp   string
	}{
		"check_perf_errors": {0, "<="}, "check_perf_throughput": {0.9, ">"},
		"check_perf_slowest": {0.5, "<="}, "check_perf_stddev": {0.1, "<="},
	}
	for i, v := range w.Verdicts {
		wv, ok := want[v.Check]
		if !ok {
			continue
		}
		if i >= 4 || v.Limit != wv.limit || v.Comparison != wv.cmp || !strings.HasPrefix(v.Source, verdict.CheckPerfSource) {
			t.Errorf("verdict %d %s: limit %g %s, source %q; want among the first four, %s %g from %s", i, v.Check, v.Limit, v.Comparison, v.Source, wv.cmp, wv.limit, verdict.CheckPerfSource)
		}
		delete(want, v.Check)
	}
	if len(want) > 0 {
		t.Errorf("verdicts missing: %v", want)
	}
	for _, f := range []string{"member0_wal_fsyncs", "member0_wal_fsync_p99", "member0_backend_commits", "throughput_ratio", "service_slowest"} {
		if w.Figure(f) == nil {
			t.Errorf("no figure %s", f)
		}
	}
	if f := w.Figure("service_puts"); f == nil || int64(f.Value) != w.Ops {
		t.Errorf("service_puts %+v, want %d: every put timed as etcdctl times it", f, w.Ops)
	}
	if r.Status == nil || (*r.Status == verdict.Fail) != (res.code == exitFail) {
		t.Errorf("status %v does not match exit %d", r.Status, res.code)
	}
	checkNoScratch(t, dir)
}

func TestEtcdCheckBadInput(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"unknown load", []string{"--load", "xxl", "--dir", dir}, `--load "xxl": want s, m, l or xl`},
		{"empty load", []string{"--load", "", "--dir", dir}, "--load"},
		{"load is case-sensitive like etcdctl's", []string{"--load", "S", "--dir", dir}, "--load"},
		{"no dir", []string{"--load", "m"}, "--dir is required"},
		{"bad duration", []string{"--dir", dir, "--duration", "soon"}, "--duration"},
		{"the preset sets the rate", []string{"--dir", dir, "--rate", "10"}, "--rate"},
		{"external without --yes", []string{"--load", "s", "--duration", "5s", "--endpoints", "http://127.0.0.1:1"}, "about 750 puts (150/s for 5s)"},
		{"ratio over 1", []string{"--dir", dir, "--min-throughput-ratio", "1.5"}, "--min-throughput-ratio"},
		{"bad slowest", []string{"--dir", dir, "--max-slowest", "soon"}, "--max-slowest"},
		{"bad stddev", []string{"--dir", dir, "--max-stddev", "-1s"}, "--max-stddev"},
		{"dir and endpoints", []string{"--dir", dir, "--endpoints", "http://127.0.0.1:1", "--yes"}, "alternatives"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := runBin(t, runOpts{}, append([]string{"etcd", "check"}, tc.args...)...)
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

// TestEtcdCheckFails overrides a limit no put can meet: the verdict fails
// with the override as its source and the exit code is 1.
func TestEtcdCheckFails(t *testing.T) {
	dir := t.TempDir()
	res := runBin(t, runOpts{}, "etcd", "check", "--load", "small", "--duration", "2s", "--max-slowest", "1ns", "--dir", dir, "--no-progress")
	if res.code != exitFail {
		t.Fatalf("exit %d, want %d; stderr:\n%s", res.code, exitFail, res.stderr)
	}
	for _, want := range []string{"FAIL  slowest put", "source: command line --max-slowest", "etcdctl check perf's rules alone: FAIL", "Result: FAIL"} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("report does not say %q:\n%s", want, res.stdout)
		}
	}
	checkNoScratch(t, dir)
}

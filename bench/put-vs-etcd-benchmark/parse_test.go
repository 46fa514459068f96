package main

import (
	"strings"
	"testing"
	"time"

	"etcdbench/bench/internal/cmp/cmptest"
)

// TestParseBenchmark reads real outputs of etcd v3.6.5's `benchmark put`:
// 300 puts from 1 client without --precise (latencies to 0.1 ms) and 2000
// puts from 100 clients over 10 connections with --precise.
func TestParseBenchmark(t *testing.T) {
	tests := []struct {
		file     string
		requests int64
		total    time.Duration
		rate     float64
		p50, p99 time.Duration
		slowest  time.Duration
		stddev   time.Duration
	}{
		{"benchmark-put.txt", 300, 328400 * time.Microsecond, 913.5430, 1 * time.Millisecond, 2700 * time.Microsecond, 3900 * time.Microsecond, 400 * time.Microsecond},
		{"benchmark-put-precise.txt", 2000, 192239552, 10403.686334017257, 9021530, 18228469, 19661866, 3399980},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			r, err := parseBenchmark(cmptest.ReadFixture(t, tc.file))
			if err != nil {
				t.Fatal(err)
			}
			if r.Requests != tc.requests || r.Total != tc.total || r.OpsPerSec != tc.rate ||
				r.Percentiles[50] != tc.p50 || r.Percentiles[99] != tc.p99 || r.Errors != 0 || r.Slowest != tc.slowest || r.Stddev != tc.stddev {
				t.Errorf("got %+v", r)
			}
		})
	}
}

func TestParseBenchmarkCases(t *testing.T) {
	const good = "Summary:\n  Total:\t1.5 secs.\n  Requests/sec:\t100\n\nLatency distribution:\n  50% in 0.001 secs.\n  99% in 0.002 secs.\n"
	tests := []struct {
		name, in, wantErr string
		errors            int64
	}{
		{name: "minimal", in: good},
		{name: "errors counted", in: good + "\nError distribution:\n  [3]\tcontext deadline exceeded\n  [2]\tetcdserver: too many requests\n", errors: 5},
		{name: "empty", in: "", wantErr: "no Requests/sec"},
		{name: "connection error", in: "{\"level\":\"warn\",\"msg\":\"retrying of unary invoker failed\"}\n", wantErr: "no Requests/sec"},
		{name: "no p99", in: "Summary:\n  Requests/sec:\t100\nLatency distribution:\n  50% in 0.001 secs.\n", wantErr: "no 99% latency"},
		{name: "bad rate", in: "Summary:\n  Requests/sec:\tNaN\n", wantErr: "Requests/sec"},
		{name: "negative latency", in: "Summary:\n  Requests/sec:\t1\nLatency distribution:\n  50% in -1 secs.\n", wantErr: "latency line"},
		{name: "percentile over 100", in: "Summary:\n  Requests/sec:\t1\nLatency distribution:\n  150% in 1 secs.\n", wantErr: "bad percentile"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := parseBenchmark([]byte(tc.in))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if r.OpsPerSec != 100 || r.Total != 1500*time.Millisecond || r.Percentiles[50] != time.Millisecond ||
				r.Percentiles[99] != 2*time.Millisecond || r.Errors != tc.errors {
				t.Errorf("got %+v", r)
			}
		})
	}
}

// TestParseEtcdbench reads a real `etcdbench etcd put --total 200
// --key-size 8 --val-size 256 -o json`.
func TestParseEtcdbench(t *testing.T) {
	r, err := parseEtcdbench(cmptest.ReadFixture(t, "etcdbench-put.json"), "put")
	if err != nil {
		t.Fatal(err)
	}
	if r.Requests != 200 || r.Total != 175357780 || r.OpsPerSec != 1140.5253875818912 ||
		r.Percentiles[50] != 815615 || r.Percentiles[99] != 2060287 || r.Errors != 0 {
		t.Errorf("got %+v", r)
	}
	tests := []struct{ name, in, want string }{
		{"not JSON", "etcdbench: connection refused", "no JSON object"},
		{"other workload", `{"schema":"etcdbench.result/v1","workloads":[{"name":"wal"}]}`, `no "etcd-put" workload`},
		{"no latency", `{"schema":"etcdbench.result/v1","workloads":[{"name":"etcd-put","ops":1,"ops_per_sec":1}]}`, `no "request" latency`},
		{"no p99", `{"schema":"etcdbench.result/v1","workloads":[{"name":"etcd-put","ops":1,"ops_per_sec":1,"latencies":[{"name":"request","percentiles":[{"p":50,"value_ns":1}]}]}]}`, "no p99"},
		{"no requests", `{"schema":"etcdbench.result/v1","workloads":[{"name":"etcd-put","latencies":[{"name":"request","percentiles":[{"p":50,"value_ns":1},{"p":99,"value_ns":2}]}]}]}`, "did no requests"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := parseEtcdbench([]byte(tc.in), "put"); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func FuzzParseBenchmark(f *testing.F) {
	f.Add(cmptest.ReadFixture(f, "benchmark-put.txt"))
	f.Add(cmptest.ReadFixture(f, "benchmark-put-precise.txt"))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := parseBenchmark(b)
		if err != nil {
			return
		}
		if r.OpsPerSec < 0 || r.Percentiles[50] < 0 || r.Percentiles[99] < 0 || r.Total < 0 || r.Errors < 0 {
			t.Fatalf("negative figure without an error: %+v", r)
		}
	})
}

func TestParseFlags(t *testing.T) {
	var stderr strings.Builder
	o, err := parseFlags(nil, &stderr)
	if err != nil {
		t.Fatal(err)
	}
	want := []config{{1, 1, 2000}, {100, 1000, 20000}}
	if len(o.Configs) != 2 || o.Configs[0] != want[0] || o.Configs[1] != want[1] || o.Rounds != 5 ||
		o.KeySize != 8 || o.ValSize != 256 || len(o.BenchmarkVersions) != 2 {
		t.Errorf("defaults: %+v", o)
	}
	for _, args := range [][]string{
		{"--rounds", "2"},
		{"--large-clients", "5", "--large-conns", "10"},
		{"--small-total", "0"},
		{"--key-size", "0"},
		{"--large-conns", "1", "--large-clients", "1", "--large-total", "2000"},
		{"--benchmark-versions", ""},
		{"extra"},
	} {
		if _, err := parseFlags(args, &stderr); err == nil {
			t.Errorf("%q: no error", args)
		}
	}
}

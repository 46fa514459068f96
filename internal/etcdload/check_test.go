package etcdload

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"

	"etcdbench/internal/etcdload/observe"
	"etcdbench/internal/result"
	"etcdbench/internal/stats"
	"etcdbench/internal/verdict"
)

func TestCheckPresetsAreEtcdctls(t *testing.T) {
	// checkPerfCfgMap of etcdctl/ctlv3/command/check.go (etcd v3.7.1):
	// limit, clients, duration; ksize 256, vsize 1024; a client per worker.
	want := map[string][3]float64{"s": {150, 50, 60}, "m": {1000, 200, 60}, "l": {8000, 500, 60}, "xl": {15000, 1000, 60}}
	for name, w := range want {
		p, ok := LookupCheckPreset(name)
		if !ok {
			t.Fatalf("no preset %s", name)
		}
		if p.Rate != w[0] || p.Clients != int(w[1]) || p.Conns != p.Clients || p.Duration != time.Duration(w[2])*time.Second || p.KeySize != 256 || p.ValSize != 1024 {
			t.Errorf("%s: %+v, want rate %g, %g clients and conns, %gs, 256/1024 bytes", name, p, w[0], w[1], w[2])
		}
		if a, ok := LookupCheckPreset(p.Alias); !ok || a.Name != name {
			t.Errorf("alias %q does not name %s", p.Alias, name)
		}
		l := p.Load()
		l.Client.Endpoints = []string{"http://127.0.0.1:0"}
		if err := l.Validate(); err != nil || l.Op != OpPut || l.Total != 0 {
			t.Errorf("%s: load %+v: %v", name, l, err)
		}
	}
	for _, bad := range []string{"", "S", "xxl", "large "} {
		if _, ok := LookupCheckPreset(bad); ok {
			t.Errorf("%q accepted", bad)
		}
	}
	if n := CheckPresets[0].Puts(5 * time.Second); n != 750 {
		t.Errorf("s for 5s: %d puts, want 750", n)
	}
}

// syntheticWorkload is what Run would record for latencies lats (all
// successful) and failed errors at rate puts/s.
func syntheticWorkload(t *testing.T, rate float64, failed int64, lats ...time.Duration) result.Workload {
	t.Helper()
	h := stats.NewLatencyHistogram()
	for _, d := range lats {
		stats.Record(h, d)
	}
	enc, err := stats.Encode(h)
	if err != nil {
		t.Fatal(err)
	}
	return result.Workload{
		Name: "etcd-put", Ops: int64(len(lats)), OpsPerSec: rate,
		Latencies: []result.Latency{{Name: "request", Summary: stats.Summarize(h), Histogram: enc}},
		Figures:   []result.Figure{{Name: "failed_requests", Value: float64(failed), Unit: "count"}},
		Verdicts:  []verdict.Verdict{{Check: "wal_fsync_p99", Status: verdict.Pass}},
	}
}

func repeat(d time.Duration, n int) []time.Duration {
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = d
	}
	return out
}

func TestJudgeCheckOnRecordedLatencies(t *testing.T) {
	ms := time.Millisecond
	fast := append(repeat(2*ms, 8000), repeat(5*ms, 990)...)
	cases := []struct {
		name   string
		rate   float64
		failed int64
		lats   []time.Duration
		fail   string // the failing check, "" for none
	}{
		{"healthy", 149, 0, fast, ""},
		{"one stall over 500 ms", 149, 0, append(append([]time.Duration(nil), fast...), 600*ms), "check_perf_slowest"},
		// Two modes far apart: 1 ms and 250 ms, stddev about 125 ms, the
		// slowest still under 500 ms.
		{"bimodal", 149, 0, append(repeat(ms, 4000), repeat(250*ms, 4000)...), "check_perf_stddev"},
		{"behind the rate", 130, 0, fast, "check_perf_throughput"},
		{"errors", 149, 3, fast, "check_perf_errors"},
	}
	p, _ := LookupCheckPreset("s")
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := syntheticWorkload(t, tc.rate, tc.failed, tc.lats...)
			l := p.Load()
			l.RunID = "test"
			judgeCheck(CheckSpec{Preset: p, Load: l, Thresholds: verdict.CheckPerfDefaults()}, &w, int64(tc.failed), serviceTimes{Count: 1, Slowest: ms, Stddev: ms}, true)
			if w.Name != "etcd-check-s" || len(w.Verdicts) != 5 || w.Verdicts[4].Check != "wal_fsync_p99" {
				t.Fatalf("workload %s with verdicts %+v: want etcd-check-s, etcdctl's four then the disk's", w.Name, w.Verdicts)
			}
			for _, v := range w.Verdicts[:4] {
				want := verdict.Pass
				if v.Check == tc.fail {
					want = verdict.Fail
				}
				if v.Status != want {
					t.Errorf("%s: %s (%s), want %s", v.Check, v.Status, v.Detail, want)
				}
			}
			sl, sd := w.Figure("slowest"), w.Figure("stddev")
			lat := w.Latency("request")
			if sl == nil || sd == nil || sl.Value != float64(lat.MaxNs)/1e9 || math.Abs(sd.Value-lat.StddevNs/1e9) > 1e-9 {
				t.Errorf("figures slowest %+v, stddev %+v do not match the latency %+v", sl, sd, lat.Summary)
			}
			// The service times (1 ms) pass whatever the due-time latencies say.
			var etcdctl string
			for _, n := range w.Notes {
				if strings.HasPrefix(n, "etcdctl check perf's rules alone") {
					etcdctl = n
				}
			}
			wantSvc := "PASS on service times"
			if tc.fail == "check_perf_throughput" || tc.fail == "check_perf_errors" {
				wantSvc = "FAIL on service times"
			}
			if !strings.Contains(etcdctl, wantSvc) {
				t.Errorf("note %q does not say %q", etcdctl, wantSvc)
			}
		})
	}
}

func TestJudgeCheckNotJudgedWhenInterrupted(t *testing.T) {
	p, _ := LookupCheckPreset("m")
	w := syntheticWorkload(t, 10, 0, time.Second)
	judgeCheck(CheckSpec{Preset: p, Load: p.Load(), Thresholds: verdict.CheckPerfDefaults()}, &w, 0, serviceTimes{}, false)
	if w.Name != "etcd-check-m" || len(w.Verdicts) != 1 {
		t.Fatalf("interrupted run: %s with %d verdicts, want etcd-check-m with only the disk's", w.Name, len(w.Verdicts))
	}
}

func TestServiceMeter(t *testing.T) {
	var m serviceMeter
	for _, d := range []time.Duration{time.Millisecond, 3 * time.Millisecond, 2 * time.Millisecond, 2 * time.Millisecond} {
		m.add(d)
	}
	s := m.summary()
	// Mean 2 ms; population stddev sqrt((1+1+0+0)/4) ms.
	wantSD := time.Duration(math.Sqrt(0.5) * float64(time.Millisecond))
	if s.Count != 4 || s.Mean != 2*time.Millisecond || s.Slowest != 3*time.Millisecond || (s.Stddev-wantSD).Abs() > time.Microsecond {
		t.Fatalf("%+v, want 4 puts, mean 2ms, slowest 3ms, stddev %v", s, wantSD)
	}
	if (&serviceMeter{}).summary() != (serviceTimes{}) {
		t.Fatal("an empty meter has figures")
	}
}

func TestCheckAgainstEmbedded(t *testing.T) {
	p, _ := LookupCheckPreset("s")
	l := p.Load()
	l.Client.Endpoints = sharedCluster(t).Endpoints()
	l.RunID = uniqueID(t)
	l.Duration = 2 * time.Second
	out, err := Check(context.Background(), CheckSpec{Preset: p, Load: l, Thresholds: verdict.CheckPerfDefaults()},
		BenchOptions{Targets: observe.EmbeddedTargets(sharedCluster(t).MetricsURLs()), Thresholds: verdict.Defaults()})
	if err != nil {
		t.Fatalf("Check: %v", err)
	}
	w := out.Workload
	if w.Name != "etcd-check-s" || w.Ops != 300 {
		t.Errorf("%s with %d puts, want etcd-check-s with 300 (150/s for 2s)", w.Name, w.Ops)
	}
	// The interceptor saw exactly the load's puts.
	if f := w.Figure("service_puts"); f == nil || int64(f.Value) != w.Ops {
		t.Errorf("service_puts %+v, want %d", f, w.Ops)
	}
	// A put's service time is part of its latency from the due time.
	if svc, sl := w.Figure("service_slowest"), w.Figure("slowest"); svc == nil || sl == nil || svc.Value <= 0 || svc.Value > sl.Value*1.01 {
		t.Errorf("service_slowest %+v against slowest %+v", svc, sl)
	}
	checks := map[string]bool{}
	for _, v := range w.Verdicts {
		checks[v.Check] = true
	}
	for _, c := range []string{"check_perf_errors", "check_perf_throughput", "check_perf_slowest", "check_perf_stddev", "wal_fsync_p99"} {
		if !checks[c] {
			t.Errorf("no %s verdict among %+v", c, w.Verdicts)
		}
	}
	if n := countPrefix(t, l.Client.Endpoints, l.Prefix()); n != 0 {
		t.Errorf("%d keys left under %s", n, l.Prefix())
	}
}

func TestServiceMeterTimesPutsOnly(t *testing.T) {
	var m serviceMeter
	calls := 0
	invoke := func(context.Context, string, any, any, *grpc.ClientConn, ...grpc.CallOption) error {
		calls++
		return nil
	}
	if err := m.intercept(context.Background(), putMethod, nil, nil, nil, invoke); err != nil || calls != 1 {
		t.Fatalf("put: %v, %d calls", err, calls)
	}
	if err := m.intercept(context.Background(), "/etcdserverpb.KV/DeleteRange", nil, nil, nil, invoke); err != nil || calls != 2 {
		t.Fatalf("delete: %v, %d calls", err, calls)
	}
	if s := m.summary(); s.Count != 1 {
		t.Fatalf("%+v, want 1 put timed", s)
	}
}

// TestCheckStopsAtTheEnd overloads two clients with 50000 puts/s for one
// second: the backlog is left unsent instead of drained.
func TestCheckStopsAtTheEnd(t *testing.T) {
	p, _ := LookupCheckPreset("s")
	l := p.Load()
	l.Client.Endpoints = sharedCluster(t).Endpoints()
	l.RunID = uniqueID(t)
	l.Rate, l.Clients, l.Conns, l.Duration = 50000, 2, 1, time.Second
	out, err := Check(context.Background(), CheckSpec{Preset: p, Load: l, Thresholds: verdict.CheckPerfDefaults()}, BenchOptions{})
	if err != nil {
		t.Fatalf("Check: %v", err)
	}
	w := out.Workload
	unsent, failed := w.Figure("unsent_requests"), w.Figure("failed_requests")
	if unsent == nil || unsent.Value <= 0 || failed == nil || w.Ops+int64(unsent.Value+failed.Value) != 50000 {
		t.Fatalf("%d puts, unsent %+v, failed %+v: want 50000 due, some unsent", w.Ops, unsent, failed)
	}
	if len(out.Errors) != int(min(failed.Value, 1)) {
		t.Errorf("errors %v beside %g failed", out.Errors, failed.Value)
	}
	if v := w.Verdicts[1]; v.Check != "check_perf_throughput" || v.Status != verdict.Fail {
		t.Errorf("throughput verdict %+v, want FAIL", v)
	}
	if n := countPrefix(t, l.Client.Endpoints, l.Prefix()); n != 0 {
		t.Errorf("%d keys left under %s", n, l.Prefix())
	}
}

// The presets are etcdctl's load models, their names and rates
// verdict's: each has its clients and connections.
func TestCheckPresetsAreTheLoadModels(t *testing.T) {
	if len(CheckPresets) != len(verdict.CheckPerfLoads) {
		t.Fatalf("%d presets, %d load models", len(CheckPresets), len(verdict.CheckPerfLoads))
	}
	for i, p := range CheckPresets {
		if l := verdict.CheckPerfLoads[i]; p.Name != l.Name || p.Rate != l.Rate || p.Clients < 1 || p.Conns != p.Clients {
			t.Errorf("preset %+v of load model %+v", p, l)
		}
	}
}

// A rate's shape is the smallest load model that asks for at least it.
func TestCheckPresetAt(t *testing.T) {
	for rate, want := range map[float64]int{10: 50, 150: 50, 151: 200, 1000: 200, 2620: 500, 8000: 500, 9000: 1000, 40000: 1000} {
		if p := CheckPresetAt(rate); p.Clients != want || p.Conns != want || p.KeySize != 256 || p.ValSize != 1024 {
			t.Errorf("at %g puts/s: %+v, want %d clients and connections", rate, p, want)
		}
	}
}

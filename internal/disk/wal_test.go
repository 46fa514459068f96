package disk

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"etcdbench/internal/stats"
	"etcdbench/internal/sysinfo"
	"etcdbench/internal/verdict"
)

func rule(threshold time.Duration) stats.StopRule {
	return stats.StopRule{Threshold: threshold, Quantile: 0.99, Confidence: 0.95, Interval: time.Second}
}

// checkInvariants verifies what must hold for every finished run.
func checkInvariants(t *testing.T, run *WALRun) {
	t.Helper()
	bs := int64(run.Config.BlockSize)
	if run.Bytes != run.Ops*bs {
		t.Errorf("bytes %d != ops %d x block %d", run.Bytes, run.Ops, bs)
	}
	if run.Sync.TotalCount() != run.Ops || run.Write.TotalCount() != run.Ops {
		t.Errorf("histograms hold %d/%d samples for %d ops", run.Sync.TotalCount(), run.Write.TotalCount(), run.Ops)
	}
	var seriesOps, seriesExceed int64
	for i, s := range run.Series.Samples {
		seriesOps += s.Ops
		seriesExceed += s.Exceed
		if s.T != i+1 {
			t.Errorf("series sample %d labelled %d", i, s.T)
		}
	}
	if seriesOps != run.Ops || seriesExceed != run.Exceed {
		t.Errorf("series counts %d ops / %d exceed, run %d / %d", seriesOps, seriesExceed, run.Ops, run.Exceed)
	}
	wl, err := run.Workload(verdict.Defaults(), sysinfo.Facts{Filesystem: sysinfo.Filesystem{Type: "ext4"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range wl.Latencies {
		prev := l.MinNs
		for _, p := range l.Percentiles {
			if p.ValueNs < prev {
				t.Errorf("%s percentiles not ordered: %+v", l.Name, l.Percentiles)
			}
			prev = p.ValueNs
		}
		if l.MaxNs < prev {
			t.Errorf("%s max %d below p99.9 %d", l.Name, l.MaxNs, prev)
		}
	}
	if f := wl.Latency("fdatasync"); f == nil || f.P99CI == nil || f.P99CI.LowerNs > f.P99CI.UpperNs {
		t.Errorf("fdatasync latency or its CI missing or inverted: %+v", f)
	}
	if len(wl.Verdicts) < 3 {
		t.Errorf("want at least 3 verdicts, got %+v", wl.Verdicts)
	}
	if _, err := json.Marshal(wl); err != nil {
		t.Errorf("workload does not marshal: %v", err)
	}
}

func TestWALCountMode(t *testing.T) {
	dir := t.TempDir()
	cfg := WALConfig{BlockSize: 2300, Count: 300, Mode: ModeCount, Rule: rule(10 * time.Millisecond)}
	run, err := RunWAL(context.Background(), dir, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if run.Ops != 300 {
		t.Fatalf("ops = %d, want 300", run.Ops)
	}
	checkInvariants(t, run)
	// One segment, preallocated to exactly what the run writes (as etcd sizes
	// its segments up front), then filled.
	files, _ := filepath.Glob(filepath.Join(dir, "*.wal"))
	if len(files) != 1 {
		t.Fatalf("segments %v", files)
	}
	if st, _ := os.Stat(files[0]); st.Size() != 300*2300 {
		t.Fatalf("segment size %d, want %d", st.Size(), 300*2300)
	}
}

func TestWALSizeModeRotatesSegments(t *testing.T) {
	dir := t.TempDir()
	cfg := WALConfig{BlockSize: 4096, Size: 3 << 20, Mode: ModeSize, SegmentBytes: 1 << 20, Rule: rule(10 * time.Millisecond)}
	run, err := RunWAL(context.Background(), dir, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if run.Ops != 768 || run.Bytes != 3<<20 {
		t.Fatalf("ops %d bytes %d, want 768 and 3 MiB", run.Ops, run.Bytes)
	}
	checkInvariants(t, run)
	if files, _ := filepath.Glob(filepath.Join(dir, "*.wal")); len(files) > 2 {
		t.Fatalf("finished segments were not removed: %v", files)
	}
}

func TestWALSizeLikeFio(t *testing.T) {
	// fio writes whole blocks only: 22 MiB / 2300 B = 10029 writes.
	cfg := WALConfig{BlockSize: 2300, Size: 22 << 20, Mode: ModeSize}
	if got := cfg.plannedBytes() / 2300; got != 10029 {
		t.Fatalf("planned %d writes, fio does 10029", got)
	}
	if need := cfg.SpaceNeeded(); need < 22<<20 || need > 30<<20 {
		t.Fatalf("space needed %d", need)
	}
	adaptive := WALConfig{BlockSize: 2300, Mode: ModeAdaptive}
	if need := adaptive.SpaceNeeded(); need < 2*EtcdSegmentBytes {
		t.Fatalf("adaptive space needed %d, want two segments", need)
	}
}

func TestWALTimeMode(t *testing.T) {
	cfg := WALConfig{BlockSize: 512, Runtime: 1500 * time.Millisecond, Mode: ModeTime, Rule: rule(10 * time.Millisecond)}
	seconds := 0
	cfg.OnSecond = func(p Progress) { seconds++ }
	run, err := RunWAL(context.Background(), t.TempDir(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if run.Elapsed < cfg.Runtime || run.Ops == 0 {
		t.Fatalf("elapsed %v ops %d", run.Elapsed, run.Ops)
	}
	if seconds < 1 || len(run.Series.Samples) < 2 {
		t.Fatalf("progress called %d times, %d series samples", seconds, len(run.Series.Samples))
	}
	if !strings.Contains(run.Reason, "runtime") {
		t.Fatalf("reason %q", run.Reason)
	}
	checkInvariants(t, run)
}

func TestWALAdaptiveDecides(t *testing.T) {
	cases := []struct {
		name      string
		threshold time.Duration
		want      stats.Outcome
	}{
		// No disk takes a second per fdatasync, and every one takes over 1 ns.
		{"clearly fast", time.Second, stats.Pass},
		{"clearly slow", time.Nanosecond, stats.Fail},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := rule(c.threshold)
			r.MinSamples, r.MinDuration = 50, time.Second
			cfg := WALConfig{BlockSize: 2300, Runtime: 30 * time.Second, Mode: ModeAdaptive, Rule: r}
			run, err := RunWAL(context.Background(), t.TempDir(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			if run.Decision.Outcome != c.want || run.Looks < 1 || !strings.HasPrefix(run.Reason, "verdict decided") {
				t.Fatalf("outcome %s after %d looks: %s", run.Decision.Outcome, run.Looks, run.Reason)
			}
			if run.Elapsed < time.Second || run.Ops < 50 {
				t.Fatalf("stopped before the minimums: %v, %d ops", run.Elapsed, run.Ops)
			}
			checkInvariants(t, run)
		})
	}
}

func TestWALCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	cfg := WALConfig{BlockSize: 2300, Runtime: time.Minute, Mode: ModeTime, Rule: rule(10 * time.Millisecond)}
	run, err := RunWAL(ctx, t.TempDir(), cfg)
	if !errors.Is(err, context.Canceled) || run == nil || !run.Cancelled {
		t.Fatalf("run %+v, err %v", run, err)
	}
	if run.Elapsed > 30*time.Second {
		t.Fatalf("cancel took effect only after %v", run.Elapsed)
	}
	wl, err := run.Workload(verdict.Defaults(), sysinfo.Facts{})
	if err != nil || len(wl.Verdicts) != 0 {
		t.Fatalf("an interrupted run must carry no verdicts: %+v, %v", wl.Verdicts, err)
	}
}

func TestWALConfigValidate(t *testing.T) {
	ok := rule(10 * time.Millisecond)
	cases := []struct {
		name string
		cfg  WALConfig
	}{
		{"zero block", WALConfig{BlockSize: 0, Mode: ModeCount, Count: 1, Rule: ok}},
		{"size below block", WALConfig{BlockSize: 4096, Mode: ModeSize, Size: 100, Rule: ok}},
		{"zero count", WALConfig{BlockSize: 1, Mode: ModeCount, Rule: ok}},
		{"time without runtime", WALConfig{BlockSize: 1, Mode: ModeTime, Rule: ok}},
		{"adaptive without cap", WALConfig{BlockSize: 1, Mode: ModeAdaptive, Rule: ok}},
		{"unknown mode", WALConfig{BlockSize: 1, Mode: "forever", Rule: ok}},
		{"bad rule", WALConfig{BlockSize: 1, Mode: ModeCount, Count: 1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if err := c.cfg.Validate(); err == nil {
				t.Fatal("accepted")
			}
			if _, err := RunWAL(context.Background(), t.TempDir(), c.cfg); err == nil {
				t.Fatal("RunWAL accepted an invalid config")
			}
		})
	}
}

func TestWALMissingDirectory(t *testing.T) {
	cfg := WALConfig{BlockSize: 2300, Count: 10, Mode: ModeCount, Rule: rule(10 * time.Millisecond)}
	_, err := RunWAL(context.Background(), filepath.Join(t.TempDir(), "gone"), cfg)
	if err == nil || !strings.Contains(err.Error(), "creating test file") {
		t.Fatalf("err = %v", err)
	}
}

func TestWALGroupCommit(t *testing.T) {
	cfg := WALConfig{BlockSize: 370, Clients: 4, Runtime: time.Second, Mode: ModeTime, Rule: rule(10 * time.Millisecond)}
	run, err := RunWAL(context.Background(), t.TempDir(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if run.Ops == 0 || run.Bytes%370 != 0 {
		t.Fatalf("ops %d bytes %d", run.Ops, run.Bytes)
	}
	entries := float64(run.Bytes) / 370 / float64(run.Ops)
	if entries < 1 || entries > 4 {
		t.Fatalf("%.2f entries per write with 4 clients", entries)
	}
	wl, err := run.Workload(verdict.Defaults(), sysinfo.Facts{})
	if err != nil || wl.Figure("entries_per_write") == nil || wl.Parameters["clients"] != 4 {
		t.Fatalf("figures %+v params %v err %v", wl.Figures, wl.Parameters, err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	cfg.Runtime = time.Minute
	if _, err := RunWAL(ctx, t.TempDir(), cfg); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled group commit: %v", err)
	}
	bad := cfg
	bad.Mode, bad.Size = ModeSize, 1<<20
	if bad.Validate() == nil {
		t.Fatal("group commit with a fixed size accepted")
	}
}

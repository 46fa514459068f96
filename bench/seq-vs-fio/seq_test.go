package main

import (
	"errors"
	"io"
	"math"
	"strings"
	"testing"
	"time"

	"etcdbench/bench/internal/cmp"
	"etcdbench/bench/internal/cmp/cmptest"
)

// TestParseFio reads real fio 3.33 reports of the two jobs (16 MiB).
func TestParseFio(t *testing.T) {
	tests := []struct {
		file, dir string
		runtime   time.Duration
	}{
		{"fio-snapshot.json", "write", 14 * time.Millisecond},
		{"fio-recovery.json", "read", 18 * time.Millisecond},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			m, err := parseFio(cmptest.ReadFixture(t, tc.file), tc.dir)
			if err != nil {
				t.Fatal(err)
			}
			want := float64(16<<20) / tc.runtime.Seconds()
			if m.Bytes != 16<<20 || m.Ops != 16 || m.Runtime != tc.runtime || math.Abs(m.Figures["bandwidth"]-want) > 1e-3 {
				t.Errorf("got %+v, want 16 MiB in 16 I/Os over %v (%.0f B/s)", m, tc.runtime, want)
			}
		})
	}
	if _, err := parseFio(cmptest.ReadFixture(t, "fio-snapshot.json"), "read"); err == nil || !strings.Contains(err.Error(), "did no read") {
		t.Errorf("wrong direction: err = %v", err)
	}
	if _, err := parseFio([]byte(`{"jobs":[{"jobname":"s","error":28}]}`), "write"); err == nil || !strings.Contains(err.Error(), "error 28") {
		t.Errorf("job error: err = %v", err)
	}
}

// TestParseEtcdbench reads real `etcdbench disk snapshot` and `disk
// recovery --random-runtime 0` reports (16 MiB).
func TestParseEtcdbench(t *testing.T) {
	tests := []struct {
		file, workload, figure string
		bw                     float64
		self                   time.Duration
	}{
		{"etcdbench-snapshot.json", "snapshot", "durable_bandwidth", 1036681633.2805555, 7634000},
		{"etcdbench-recovery.json", "recovery", "sequential_read_bandwidth", 1419840391.2436318, 2065000},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			m, err := parseEtcdbench(cmptest.ReadFixture(t, tc.file), tc.workload, tc.figure)
			if err != nil {
				t.Fatal(err)
			}
			if m.Bytes != 16<<20 || m.Figures["bandwidth"] != tc.bw || m.SelfCPU != tc.self {
				t.Errorf("got %+v", m)
			}
		})
	}
	if _, err := parseEtcdbench(cmptest.ReadFixture(t, "etcdbench-snapshot.json"), "recovery", "x"); err == nil {
		t.Error("wrong workload accepted")
	}
}

func FuzzParseFio(f *testing.F) {
	f.Add(cmptest.ReadFixture(f, "fio-snapshot.json"))
	f.Add(cmptest.ReadFixture(f, "fio-recovery.json"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if m, err := parseFio(b, "write"); err == nil && (m.Bytes <= 0 || m.Runtime <= 0) {
			t.Fatalf("no error and no figure: %+v", m)
		}
	})
}

func TestCPUPerGiB(t *testing.T) {
	fio := cmp.Measurement{Tool: cmp.ToolFio, Bytes: gib + mib, CPU: 400 * time.Millisecond,
		Base: &cmp.Baseline{Bytes: mib, CPU: 150 * time.Millisecond}}
	if got := cpuPerGiB(fio); got != float64(250*time.Millisecond) {
		t.Errorf("fio: %v, want 250ms (start-up subtracted)", time.Duration(got))
	}
	etcd := cmp.Measurement{Tool: cmp.ToolEtcdbench, Bytes: gib / 2, CPU: 2 * time.Second, SelfCPU: 100 * time.Millisecond}
	if got := cpuPerGiB(etcd); got != float64(200*time.Millisecond) {
		t.Errorf("etcdbench: %v, want 200ms (its own timed CPU, not the child's)", time.Duration(got))
	}
	if got := cpuPerGiB(cmp.Measurement{Tool: cmp.ToolEtcdbench, Bytes: gib}); !math.IsNaN(got) {
		t.Errorf("no CPU figure: %v, want NaN", got)
	}
}

const mib = 1 << 20

func TestArgs(t *testing.T) {
	r := runner{p: params{BS: "1m", Size: "1g"}}
	snap := strings.Join(r.fioSnapshotArgs("/d/s", "1g"), " ")
	rec := strings.Join(r.fioRecoveryArgs("/d/s", "1m"), " ")
	for _, c := range []struct{ args, want string }{
		{snap, "--rw=write --bs=1m --size=1g --end_fsync=1 --ioengine=psync"},
		{rec, "--filename=recovery.dat --rw=read --bs=1m --direct=1 --size=1g --io_size=1m --ioengine=psync"},
	} {
		if !strings.Contains(c.args, c.want) {
			t.Errorf("%q lacks %q", c.args, c.want)
		}
	}
	steps, pairs := plan(r)
	if len(steps) != 4 || len(pairs) != 2 || pairs[0].Etcd != etcdSnapshot || pairs[1].Fio != fioRecovery {
		t.Errorf("plan: %d steps, pairs %+v", len(steps), pairs)
	}
}

func TestParseFlags(t *testing.T) {
	o, err := parseFlags(nil, io.Discard)
	if err != nil || o.BS != "1m" || o.Size != "1g" || !o.Warm || o.Rounds != 5 {
		t.Fatalf("defaults = %+v, %v", o, err)
	}
	for _, bad := range [][]string{{"--bs", "1000"}, {"--bs", "2g"}, {"--size", "0"}, {"--rounds", "2"}} {
		var u cmp.UsageError
		if _, err := parseFlags(bad, io.Discard); !errors.As(err, &u) {
			t.Errorf("%v: err = %v, want a usage error", bad, err)
		}
	}
}

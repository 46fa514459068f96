package main

import (
	"errors"
	"io"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"etcdbench/bench/internal/cmp"
	"etcdbench/bench/internal/cmp/cmptest"
)

// TestParseFio reads a real fio 3.33 report of the mixed job
// (io_uring, 4 jobs x depth 8, 1 s, 16 MiB, group_reporting).
func TestParseFio(t *testing.T) {
	m, err := parseFio(cmptest.ReadFixture(t, "fio-mixed.json"))
	if err != nil {
		t.Fatal(err)
	}
	if m.Ops != 90428 || m.Bytes != 90428*4096 || m.Runtime.Milliseconds() != 1002 ||
		math.Abs(m.Figures["iops"]-90247.50498999999) > 1e-6 || m.Figures["read_p99_ns"] != 1449984 {
		t.Errorf("got %+v", m)
	}
}

func TestParseFioErrors(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"not JSON", "fio: engine io_uring not loadable", "no JSON object"},
		{"two groups", `{"jobs":[{"jobname":"a"},{"jobname":"b"}]}`, "reported 2 jobs"},
		{"job error", `{"jobs":[{"jobname":"a","error":5}]}`, "error 5"},
		{"no I/O", `{"jobs":[{"jobname":"a"}]}`, "did no I/O"},
		{"no clat percentiles", `{"jobs":[{"jobname":"a","read":{"total_ios":3,"clat_ns":{"N":3}}}]}`, "clat_ns"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := parseFio([]byte(tc.in)); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

// TestParseEtcdbench reads a real `etcdbench disk mixed --size 16m
// --runtime 1s --numjobs 4 --iodepth 8 --engine io_uring -o json`.
func TestParseEtcdbench(t *testing.T) {
	m, err := parseEtcdbench(cmptest.ReadFixture(t, "etcdbench-mixed.json"))
	if err != nil {
		t.Fatal(err)
	}
	if m.Ops != 61316 || m.Bytes != 251150336 || m.Runtime != 1007599407 || m.SelfCPU != 702040000 ||
		math.Abs(m.Figures["iops"]-(48725.71347196118+12127.835640935426)) > 1e-6 || m.Figures["read_p99_ns"] != 1642495 {
		t.Errorf("got %+v", m)
	}
	if _, err := parseEtcdbench([]byte(`{"schema":"etcdbench.result/v1","workloads":[{"name":"mixed","ops":3,"figures":[{"name":"read_iops","value":1}]}]}`)); err == nil ||
		!strings.Contains(err.Error(), "write_iops") {
		t.Errorf("missing write_iops: err = %v", err)
	}
}

func FuzzParseFio(f *testing.F) {
	f.Add(cmptest.ReadFixture(f, "fio-mixed.json"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if m, err := parseFio(b); err == nil && m.Ops <= 0 {
			t.Fatalf("no error and no I/O: %+v", m)
		}
	})
}

func FuzzParseEtcdbench(f *testing.F) {
	f.Add(cmptest.ReadFixture(f, "etcdbench-mixed.json"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if m, err := parseEtcdbench(b); err == nil && m.Ops <= 0 {
			t.Fatalf("no error and no I/O: %+v", m)
		}
	})
}

func TestFioArgs(t *testing.T) {
	r := runner{p: params{BS: "4k", Size: "256m", Runtime: "10s", NumJobs: 4, IODepth: 8, RWMixRead: 80}}
	args := strings.Join(r.fioArgs("/d/sub", "libaio", "10s"), " ")
	for _, want := range []string{"--directory=/d/sub --filename=mixed.dat", "--rw=randrw --rwmixread=80 --bs=4k", "--direct=1 --ioengine=libaio --iodepth=8 --numjobs=4",
		"--size=256m --runtime=10s --time_based --group_reporting --output-format=json"} {
		if !strings.Contains(args, want) {
			t.Errorf("fio args %q lack %q", args, want)
		}
	}
	if args := strings.Join(r.fioArgs("/d", "psync", "1ms"), " "); !strings.Contains(args, "--iodepth=1 --numjobs=32") || !strings.Contains(args, "--runtime=1ms") {
		t.Errorf("psync: %q, want 32 jobs of depth 1 (etcdbench runs numjobs x iodepth goroutines)", args)
	}
	eb := strings.Join(r.etcdbenchArgs("io_uring", "10s"), " ")
	if eb != "disk mixed --dir  --bs 4k --size 256m --runtime 10s --numjobs 4 --iodepth 8 --rwmixread 80 --engine io_uring -o json --no-progress" {
		t.Errorf("etcdbench args %q", eb)
	}
}

func TestPlan(t *testing.T) {
	names := func(steps []cmp.Step) []string {
		var s []string
		for _, st := range steps {
			s = append(s, st.Run)
		}
		return s
	}
	tests := []struct {
		name      string
		engines   []string
		psync     bool
		wantSteps []string
		wantPairs []string
	}{
		{"defaults", []string{"io_uring", "libaio"}, true,
			[]string{"fio io_uring", "etcdbench io_uring", "fio libaio", "fio psync", "etcdbench psync"},
			[]string{"io_uring vs fio io_uring", "io_uring vs fio libaio", "psync vs fio psync"}},
		{"no psync", []string{"libaio"}, false,
			[]string{"fio libaio", "etcdbench io_uring"}, []string{"io_uring vs fio libaio"}},
		{"psync also among the fio engines runs once", []string{"io_uring", "psync"}, true,
			[]string{"fio io_uring", "etcdbench io_uring", "fio psync", "etcdbench psync"},
			[]string{"io_uring vs fio io_uring", "io_uring vs fio psync", "psync vs fio psync"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			steps, pairs := plan(options{FioEngines: tc.engines, Psync: tc.psync}, runner{})
			var pn []string
			for _, p := range pairs {
				pn = append(pn, p.Name)
			}
			if !slices.Equal(names(steps), tc.wantSteps) || !slices.Equal(pn, tc.wantPairs) {
				t.Errorf("steps %v pairs %v, want %v %v", names(steps), pn, tc.wantSteps, tc.wantPairs)
			}
		})
	}
}

func TestParseFlags(t *testing.T) {
	o, err := parseFlags(nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if o.NumJobs != 4 || o.IODepth != 8 || o.Size != "256m" || o.Runtime != "10s" || !slices.Equal(o.FioEngines, []string{"io_uring", "libaio"}) || !o.Psync || o.Rounds != 5 {
		t.Errorf("defaults = %+v", o)
	}
	if o, err := parseFlags([]string{"--numjobs", "20", "--iodepth", "8"}, io.Discard); err != nil || o.NumJobs != 20 {
		t.Errorf("seed's 20 x 8: %+v, %v", o, err)
	}
	for _, bad := range [][]string{{"--fio-engines", ""}, {"--fio-engines", "io_uring;rm"}, {"--bs", "1000"}, {"--runtime", "0"},
		{"--numjobs", "0"}, {"--rwmixread", "101"}, {"--size", "x"}, {"--rounds", "1"}} {
		if _, err := parseFlags(bad, io.Discard); !isUsage(err) {
			t.Errorf("%v: err = %v, want a usage error", bad, err)
		}
	}
}

func isUsage(err error) bool {
	var u cmp.UsageError
	return errors.As(err, &u)
}

func TestCPUPerIOMetric(t *testing.T) {
	ms := metrics()
	m := cmp.Measurement{Tool: cmp.ToolFio, Ops: 10_065, CPU: 1200 * time.Millisecond, Base: &cmp.Baseline{Ops: 65, CPU: 200 * time.Millisecond},
		Figures: map[string]float64{"iops": 1000}}
	if got := ms[1].Value(m); got != float64(100*time.Microsecond) {
		t.Errorf("CPU per I/O = %v, want 100µs: (1.2 s - 0.2 s) / (10065 - 65)", time.Duration(got))
	}
	e := cmp.Measurement{Tool: cmp.ToolEtcdbench, Ops: 1000, CPU: 3 * time.Second, SelfCPU: 50 * time.Millisecond}
	if got := ms[1].Value(e); got != float64(50*time.Microsecond) {
		t.Errorf("etcdbench CPU per I/O = %v, want 50µs (its own figure, not the child's)", time.Duration(got))
	}
	if got := ms[2].Value(m); !math.IsNaN(got) {
		t.Errorf("read p99 without a figure = %v, want NaN", got)
	}
}

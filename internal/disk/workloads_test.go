package disk

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"etcdbench/internal/disk/uring"
	"etcdbench/internal/result/resulttest"
	"etcdbench/internal/sysinfo"
	"etcdbench/internal/verdict"
)

// small settings that keep each workload to a second or two.
var smallSettings = map[string]map[string]string{
	"backend":        {"db-size": "8m", "runtime": "2s", "min-runtime": "1s"},
	"wal-under-load": {"runtime": "2s", "min-runtime": "1s"},
	"mixed":          {"size": "16m", "runtime": "1s", "numjobs": "2", "iodepth": "4"},
	"snapshot":       {"size": "8m"},
	"compaction":     {"size": "8m", "sync-every": "1m"},
	"recovery":       {"size": "8m", "random-runtime": "500ms"},
}

func testEnv(t *testing.T) Env {
	t.Helper()
	dir := t.TempDir()
	return Env{Dir: dir, Root: "/", Facts: sysinfo.Collect("/", dir), Thresholds: verdict.Defaults()}
}

func quick(t *testing.T) Preset {
	t.Helper()
	p, err := PresetNamed("quick")
	if err != nil {
		t.Fatal(err)
	}
	p.WAL.MinRuntime, p.WAL.MinSamples, p.WAL.Runtime = time.Second, 50, 3*time.Second
	p.Backend.DBSize = 8 * mib
	return p
}

func TestEveryWorkloadRuns(t *testing.T) {
	for _, spec := range Specs() {
		t.Run(spec.Name, func(t *testing.T) {
			w, err := spec.Build(quick(t), NewSettings(smallSettings[spec.Name]))
			if err != nil {
				t.Fatal(err)
			}
			env := testEnv(t)
			wl, err := w.Run(context.Background(), env)
			if err != nil {
				t.Fatal(err)
			}
			if wl.Name != spec.Name {
				t.Fatalf("result named %q", wl.Name)
			}
			resulttest.CheckWorkload(t, wl)
			if left, _ := os.ReadDir(env.Dir); len(left) != 0 {
				t.Errorf("left files behind: %v", left)
			}
			switch spec.Name {
			case "snapshot", "compaction":
				bs := wl.Parameters["block_size"].(int64)
				if wl.Bytes != wl.Ops*bs || wl.Bytes != 8*mib {
					t.Errorf("bytes %d, ops %d x %d", wl.Bytes, wl.Ops, bs)
				}
				if wl.Figure("time_to_durable") == nil || wl.Figure("durable_bandwidth") == nil {
					t.Errorf("figures %+v", wl.Figures)
				}
			case "mixed":
				if wl.Engine != EngineIOUring && wl.Engine != EnginePsync {
					t.Errorf("engine %q", wl.Engine)
				}
				if wl.Bytes != wl.Ops*4096 {
					t.Errorf("bytes %d != ops %d x 4096", wl.Bytes, wl.Ops)
				}
				r, w := wl.Figure("read_iops"), wl.Figure("write_iops")
				if r == nil || w == nil || r.Value <= w.Value {
					t.Errorf("80 %% reads should give more read than write IOPS: %+v", wl.Figures)
				}
			case "recovery":
				if wl.Engine != engineDirect && wl.Engine != engineFadvise {
					t.Errorf("engine %q", wl.Engine)
				}
				if len(wl.Verdicts) != 1 || wl.Verdicts[0].Check != "recovery_bandwidth" {
					t.Errorf("verdicts %+v", wl.Verdicts)
				}
				if wl.Figure("time_to_read_1GB") == nil {
					t.Errorf("figures %+v", wl.Figures)
				}
			case "backend":
				if len(wl.Verdicts) != 1 || wl.Verdicts[0].Check != "backend_commit_p99" || wl.Verdicts[0].Confidence == nil {
					t.Errorf("verdicts %+v", wl.Verdicts)
				}
				if wl.Bytes != wl.Ops*17*4096 {
					t.Errorf("bytes %d != commits %d x 17 pages", wl.Bytes, wl.Ops)
				}
			case "wal-under-load":
				if wl.Latency("fdatasync-idle") == nil || wl.Latency("background-commit") == nil || wl.Figure("p99_ratio") == nil {
					t.Errorf("latencies %v figures %+v", wl.Latencies, wl.Figures)
				}
				if len(wl.Verdicts) != 1 || wl.Verdicts[0].Check != "wal_fsync_p99_under_load" {
					t.Errorf("verdicts %+v", wl.Verdicts)
				}
			}
		})
	}
}

func TestMixedEngines(t *testing.T) {
	engines := []string{EnginePsync, EngineIOUring}
	for _, e := range engines {
		t.Run(e, func(t *testing.T) {
			if e == EngineIOUring {
				if err := uring.Probe(); err != nil {
					t.Skipf("io_uring unavailable here: %v", err)
				}
			}
			set := map[string]string{"engine": e}
			for k, v := range smallSettings["mixed"] {
				set[k] = v
			}
			w, err := mixedSpec.Build(quick(t), NewSettings(set))
			if err != nil {
				t.Fatal(err)
			}
			wl, err := w.Run(context.Background(), testEnv(t))
			if err != nil {
				t.Fatal(err)
			}
			if wl.Engine != e {
				t.Fatalf("engine %q, want %q", wl.Engine, e)
			}
			resulttest.CheckWorkload(t, wl)
			if (e == EngineIOUring) != (wl.Latency("submit") != nil) {
				t.Errorf("submit latency present: %v", wl.Latency("submit") != nil)
			}
		})
	}
}

func TestSuiteUsesIdleWALAsBaseline(t *testing.T) {
	p := quick(t)
	var ws []Named
	for _, name := range []string{"wal", "wal-under-load"} {
		spec, _ := Lookup(name)
		w, err := spec.Build(p, NewSettings(smallSettings[name]))
		if err != nil {
			t.Fatal(err)
		}
		ws = append(ws, Named{Name: name, Workload: w})
	}
	var started []string
	out, m, err := RunSuite(context.Background(), testEnv(t), ws, func(i int, name string) { started = append(started, name) })
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 2 || len(started) != 2 {
		t.Fatalf("ran %v", started)
	}
	idle, _ := out[0].Latency("fdatasync").At(99)
	base, _ := out[1].Latency("fdatasync-idle").At(99)
	if idle != base {
		t.Fatalf("wal-under-load measured its own idle WAL (p99 %d) instead of the suite's (%d)", base, idle)
	}
	if load, _ := out[1].Latency("fdatasync").At(99); m.WALP99 != time.Duration(idle) || m.WALUnderLoadP99 != time.Duration(load) || m.Capacity != nil {
		t.Errorf("measured %+v: want the two WALs' p99s typed (%d, %d)", m, idle, load)
	}
}

func TestBadSettings(t *testing.T) {
	cases := []struct {
		workload string
		set      map[string]string
	}{
		{"mixed", map[string]string{"bs": "1000"}},
		{"mixed", map[string]string{"numjobs": "0"}},
		{"mixed", map[string]string{"rwmixread": "101"}},
		{"mixed", map[string]string{"engine": "libaio"}},
		{"mixed", map[string]string{"iodepth": "4x"}},
		{"snapshot", map[string]string{"size": "-1"}},
		{"snapshot", map[string]string{"bs": "2m", "size": "1m"}},
		{"compaction", map[string]string{"sync-every": "0"}},
		{"recovery", map[string]string{"bs": "1000"}},
		{"backend", map[string]string{"pages": "0"}},
		{"backend", map[string]string{"interval": "soon"}},
		{"backend", map[string]string{"db-size": "4k"}},
		{"wal-under-load", map[string]string{"background": "disco"}},
	}
	for _, c := range cases {
		t.Run(c.workload+"/"+firstKey(c.set), func(t *testing.T) {
			spec, ok := Lookup(c.workload)
			if !ok {
				t.Fatal("no such workload")
			}
			if _, err := spec.Build(quick(t), NewSettings(c.set)); !errors.Is(err, ErrBadParam) {
				t.Fatalf("err = %v, want ErrBadParam", err)
			}
		})
	}
	if _, err := PresetNamed("leisurely"); !errors.Is(err, ErrBadParam) {
		t.Fatal("unknown preset accepted")
	}
}

func firstKey(m map[string]string) string {
	for k := range m {
		return k
	}
	return ""
}

func TestWorkloadsStopOnCancel(t *testing.T) {
	for _, name := range []string{"backend", "mixed", "recovery"} {
		t.Run(name, func(t *testing.T) {
			spec, _ := Lookup(name)
			set := map[string]string{"runtime": "30s"}
			if name == "recovery" {
				set = map[string]string{"size": "8m", "random-runtime": "30s"}
			}
			if name == "mixed" {
				set["size"] = "8m"
			}
			w, err := spec.Build(quick(t), NewSettings(set))
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(1500*time.Millisecond, cancel)
			start := time.Now()
			wl, err := w.Run(ctx, testEnv(t))
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("err = %v", err)
			}
			if time.Since(start) > 20*time.Second || len(wl.Verdicts) != 0 {
				t.Fatalf("took %v, verdicts %v", time.Since(start), wl.Verdicts)
			}
		})
	}
}

// Every setting a spec declares has the value its preset gives it, for
// help to show (not "from the preset").
func TestSpecDefaults(t *testing.T) {
	for _, p := range Presets() {
		for _, spec := range Specs() {
			d := spec.Defaults(p)
			for _, prm := range spec.Params {
				if d[prm.Name] == "" {
					t.Errorf("%s, preset %s: no default for --%s", spec.Name, p.Name, prm.Name)
				}
			}
		}
	}
	if got := backendSpec.Defaults(Presets()[1])["db-size"]; got != "64m" {
		t.Errorf("backend's default --db-size %q, want 64m as typed", got)
	}
}

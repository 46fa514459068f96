package diskmodel

import (
	"context"
	"encoding/json"
	"os"
	"testing"

	"etcdbench/internal/disk"
	"etcdbench/internal/result"
	"etcdbench/internal/sysinfo"
	"etcdbench/internal/verdict"
)

func testEnv(t *testing.T) disk.Env {
	t.Helper()
	dir := t.TempDir()
	return disk.Env{Dir: dir, Root: "/", Facts: sysinfo.Collect("/", dir), Thresholds: verdict.Defaults()}
}

// checkWorkload verifies what must hold for every finished workload (as
// disk's tests do for theirs).
func checkWorkload(t *testing.T, wl result.Workload) {
	t.Helper()
	if wl.Ops <= 0 || wl.DurationNs <= 0 {
		t.Errorf("%s: ops %d in %d ns", wl.Name, wl.Ops, wl.DurationNs)
	}
	for _, l := range wl.Latencies {
		prev := l.MinNs
		for _, p := range l.Percentiles {
			if p.ValueNs < prev {
				t.Errorf("%s/%s percentiles not ordered: %+v", wl.Name, l.Name, l.Percentiles)
			}
			prev = p.ValueNs
		}
	}
	if d := wl.Device; d != nil && (d.Utilization < 0 || d.Utilization > 1 || d.AvgQueue < 0) {
		t.Errorf("%s: device figures out of range: %+v", wl.Name, d)
	}
	if p := wl.Process; p == nil || p.UserNs < 0 || p.SystemNs < 0 {
		t.Errorf("%s: process figures %+v", wl.Name, p)
	}
	if _, err := json.Marshal(wl); err != nil {
		t.Errorf("%s: %v", wl.Name, err)
	}
}

// The capacity workload, built from its registration with the quick
// preset and small settings, runs, names its result and leaves nothing
// behind, as every disk workload does.
func TestSpecRuns(t *testing.T) {
	p, err := disk.PresetNamed("quick")
	if err != nil {
		t.Fatal(err)
	}
	spec, ok := Lookup("capacity")
	if !ok {
		t.Fatal("no capacity workload among Specs")
	}
	w, err := spec.Build(p, map[string]string{"start": "2000", "max-rate": "4000", "step-runtime": "1s", "step-min-runtime": "200ms"})
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
	checkWorkload(t, wl)
	if left, _ := os.ReadDir(env.Dir); len(left) != 0 {
		t.Errorf("left files behind: %v", left)
	}
}

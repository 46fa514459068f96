package diskmodel

import (
	"context"
	"os"
	"testing"

	"etcdbench/internal/disk"
	"etcdbench/internal/result/resulttest"
	"etcdbench/internal/sysinfo"
	"etcdbench/internal/verdict"
)

func testEnv(t *testing.T) disk.Env {
	t.Helper()
	dir := t.TempDir()
	return disk.Env{Dir: dir, Root: "/", Facts: sysinfo.Collect("/", dir), Thresholds: verdict.Defaults()}
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
	w, err := spec.Build(p, disk.NewSettings(map[string]string{"start": "2000", "max-rate": "4000", "step-runtime": "1s", "step-min-runtime": "200ms"}))
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
}

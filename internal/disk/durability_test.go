package disk

import (
	"context"
	"strings"
	"testing"
	"time"

	"etcdbench/internal/sysinfo"
	"etcdbench/internal/testutil/fusedelay"
	"etcdbench/internal/testutil/loopmount"
	"etcdbench/internal/verdict"
)

// TestStorageRulesOnRealMounts runs the WAL workload on real mounts made
// for the purpose and checks which storage verdicts it gives, and that
// the mount rule's FAIL comes first. A loop device reports rotational=1:
// the rotational rule must read the disk at the bottom of the chain
// instead (this machine's, which is not judged when virtual).
func TestStorageRulesOnRealMounts(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped in -short: mounts loop images and runs the WAL loop on each")
	}
	const img = 256 << 20 // two 64 MB WAL segments fit
	cases := []struct {
		name  string
		dir   func(t *testing.T) string
		want  []string // storage checks, in order, before the latency verdicts
		first verdict.Status
	}{
		{"ext4 with barriers on a loop", func(t *testing.T) string { return loopmount.Mount(t, "", "ext4", "", img).Dir }, nil, verdict.Pass},
		{"ext4 barrier=0 on a loop", func(t *testing.T) string { return loopmount.Mount(t, "", "ext4", "barrier=0", img).Dir }, []string{verdict.CheckMountFlushDisabled}, verdict.Fail},
		{"btrfs nobarrier on a loop", func(t *testing.T) string { return loopmount.Mount(t, "", "btrfs", "nobarrier", img).Dir }, []string{verdict.CheckMountFlushDisabled}, verdict.Fail},
		{"xfs on a loop", func(t *testing.T) string { return loopmount.Mount(t, "", "xfs", "", 320<<20).Dir }, nil, verdict.Pass},
		{"ext4 inside a barrier=0 ext4 (the backing file's filesystem counts)", func(t *testing.T) string {
			outer := loopmount.Mount(t, "", "ext4", "barrier=0", 600<<20)
			return loopmount.Mount(t, outer.Dir, "ext4", "", img).Dir
		}, []string{verdict.CheckMountFlushDisabled}, verdict.Fail},
		{"overlay", loopmount.Overlay, []string{verdict.CheckContainerLayer}, verdict.Warn},
		{"tmpfs stays as before", func(t *testing.T) string { return loopmount.Tmpfs(t, img) }, nil, verdict.Pass},
	}
	p := quick(t)
	p.WAL.MinRuntime, p.WAL.MinSamples, p.WAL.Runtime = 500*time.Millisecond, 10, time.Second
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := c.dir(t)
			env := Env{Dir: dir, Root: "/", Facts: sysinfo.Collect("/", dir), Thresholds: verdict.Defaults()}
			w, err := walSpec.Build(p, NewSettings(nil))
			if err != nil {
				t.Fatal(err)
			}
			wl, err := w.Run(context.Background(), env)
			if err != nil {
				t.Fatal(err)
			}
			var checks []string
			for _, v := range wl.Verdicts {
				checks = append(checks, v.Check)
				if v.Check == "rotational_sync_fast" && env.Facts.Stack != nil {
					t.Errorf("the rotational rule judged %s's own flag; chain %s", env.Facts.Device.Name, env.Facts.Stack.Chain)
				}
			}
			t.Logf("chain %v; verdicts %q; notes %q", env.Facts.Stack, checks, wl.Notes)
			storage := 0
			for _, c := range checks {
				if c == verdict.CheckMountFlushDisabled || c == verdict.CheckNetworkFS || c == verdict.CheckContainerLayer {
					storage++
				}
			}
			if storage != len(c.want) || strings.Join(checks[:len(c.want)], ",") != strings.Join(c.want, ",") {
				t.Fatalf("verdicts %q, want %q first and no other storage verdict", checks, c.want)
			}
			if len(c.want) > 0 && wl.Verdicts[0].Status != c.first {
				t.Errorf("first verdict %s %s, want %s", wl.Verdicts[0].Check, wl.Verdicts[0].Status, c.first)
			}
			if c.first == verdict.Fail && verdict.Worst(wl.Verdicts) != verdict.Fail {
				t.Errorf("worst %s", verdict.Worst(wl.Verdicts))
			}
		})
	}
}

// TestStorageRulesOnFUSE judges a real FUSE mount. The WAL loop is not
// run on it: the FUSE server would be this test process, and the loop's
// raw system calls keep a garbage collection waiting on a thread that
// waits on that server (the command-line tests run the binary instead).
func TestStorageRulesOnFUSE(t *testing.T) {
	dir := fusedelay.Mount(t, t.TempDir(), 0).Dir
	facts := sysinfo.Collect("/", dir)
	vs := verdict.JudgeStorage(StorageFigures(facts))
	if len(vs) != 1 || vs[0].Check != verdict.CheckNetworkFS || vs[0].Status != verdict.Warn {
		t.Fatalf("filesystem %s: verdicts %+v, want one %s WARN", facts.Filesystem.Type, vs, verdict.CheckNetworkFS)
	}
	if !strings.Contains(vs[0].Detail, facts.Filesystem.Type) {
		t.Errorf("detail %q does not name %s", vs[0].Detail, facts.Filesystem.Type)
	}
}

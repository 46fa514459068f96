package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"etcdbench/internal/capacity"
	"etcdbench/internal/disk"
	"etcdbench/internal/etcdload"
	"etcdbench/internal/etcdrun"
	"etcdbench/internal/result"
)

// The capacity sweep compares its answer with etcdctl check perf's loads;
// disk cannot import etcdload, so the two tables are kept equal here.
func TestCapacityMarksAreCheckPerfLoads(t *testing.T) {
	if len(disk.CheckPerfMarks) != len(etcdload.CheckPresets) {
		t.Fatalf("%d marks, %d check perf presets", len(disk.CheckPerfMarks), len(etcdload.CheckPresets))
	}
	for i, p := range etcdload.CheckPresets {
		if m := disk.CheckPerfMarks[i]; m.Name != p.Name || m.Rate != p.Rate {
			t.Errorf("mark %s at %v, check perf preset %s at %v", m.Name, m.Rate, p.Name, p.Rate)
		}
	}
}

// Ctrl-C in the middle of a sweep reports the steps done so far, marked
// interrupted, and leaves the directory as it was.
func TestCapacityInterrupted(t *testing.T) {
	d := dirWithPrecious(t)
	before := snapshot(t, d)
	p := start(t, runOpts{}, "capacity", "--dir", d, "--start", "2000", "--step-min-runtime", "300ms", "--no-progress", "-o", "json")
	sd := waitScratch(t, p, d)
	waitFor(t, 60*time.Second, "the second step", func() bool {
		_, err := os.Stat(filepath.Join(sd, "capacity", "step-2"))
		return err == nil || p.exited()
	})
	p.signal(t, syscall.SIGINT)
	res := p.wait(t)
	if res.code != 130 {
		t.Fatalf("exit code %d, want 130; stderr:\n%s", res.code, res.stderr)
	}
	checkOneErrorLine(t, res.stderr)
	r, err := result.Read(strings.NewReader(res.stdout))
	if err != nil {
		t.Fatal(err)
	}
	c := r.Workloads[0].Capacity
	if !r.Interrupted || c == nil || !c.Interrupted || len(c.Steps) == 0 || c.Steps[0].Rate != 2000 {
		t.Fatalf("interrupted sweep's report: interrupted %v, capacity %+v", r.Interrupted, c)
	}
	checkNoScratch(t, d)
	checkSnapshot(t, d, before)
}

// etcd capacity on an embedded etcd: a short sweep runs, reports its
// steps and leaves nothing behind.
func TestEtcdCapacityEmbedded(t *testing.T) {
	d := dirWithPrecious(t)
	before := snapshot(t, d)
	res := runBin(t, runOpts{}, "etcd", "capacity", "--dir", d, "--step", "1s", "--start", "100", "--max-rate", "200", "--no-progress", "-o", "json")
	if res.code != exitOK && res.code != exitFail {
		t.Fatalf("exit code %d; stderr:\n%s", res.code, res.stderr)
	}
	r, err := result.Read(strings.NewReader(res.stdout))
	if err != nil {
		t.Fatal(err)
	}
	w := r.Workloads[0]
	c := w.Capacity
	if w.Name != "etcd-capacity" || c == nil || len(c.Steps) < 1 || c.Steps[0].Rate != 100 || c.Steps[0].Achieved <= 0 || c.Bend == "" {
		t.Fatalf("etcd capacity result: %s %+v", w.Name, c)
	}
	checkEvidence(t, c, 1)
	checkNoScratch(t, d)
	checkSnapshot(t, d, before)
}

// etcd capacity on three embedded members: every member's CPU is in
// every step's evidence, with the cluster's backlog, the machine's CPU and
// the load generator's, and the answer is one of the named limits.
func TestEtcdCapacityThreeMembers(t *testing.T) {
	d := t.TempDir()
	res := runBin(t, runOpts{}, "etcd", "capacity", "--dir", d, "--members", "3", "--step", "1s", "--start", "100", "--max-rate", "200",
		"--resolution", "0.5", "--no-progress", "-o", "json")
	if res.code != exitOK && res.code != exitFail {
		t.Fatalf("exit code %d; stderr:\n%s", res.code, res.stderr)
	}
	r, err := result.Read(strings.NewReader(res.stdout))
	if err != nil {
		t.Fatal(err)
	}
	c := r.Workloads[0].Capacity
	if c == nil || len(c.Steps) == 0 || c.Interrupted {
		t.Fatalf("etcd capacity result: %+v", c)
	}
	checkEvidence(t, c, 3)
	checkNoScratch(t, d)
	if left := memberPIDs(t, d); len(left) > 0 {
		t.Errorf("member processes %v still run after etcdbench exited", left)
	}
}

// checkEvidence checks a sweep's answer and that every step carries the
// evidence of every member, the machine and the load generator.
func checkEvidence(t *testing.T, c *result.Capacity, members int) {
	t.Helper()
	limits := []string{capacity.BendNone, etcdrun.LimitCPU, etcdrun.LimitDisk, etcdrun.LimitNetwork, etcdrun.LimitLeader, etcdrun.LimitUnknown}
	switch {
	case !slices.Contains(limits, c.Bend) || c.Evidence == "":
		t.Errorf("limit %q (%s), want one of %v with its evidence", c.Bend, c.Evidence, limits)
	case c.Bend == capacity.BendNone && (c.Upper != 0 || c.Rate != 200):
		t.Errorf("no limit named, yet the answer is %v..%v", c.Rate, c.Upper)
	case c.Bend != capacity.BendNone && (c.Upper <= c.Rate || !strings.Contains(c.Evidence, fmt.Sprintf("at %.0f puts/s", c.Upper))):
		t.Errorf("limit %s at %v..%v: %s", c.Bend, c.Rate, c.Upper, c.Evidence)
	}
	for _, s := range c.Steps {
		extra := map[string]float64{}
		for _, f := range s.Extra {
			extra[f.Name] = f.Value
		}
		in := func(name string, lo, hi float64) {
			t.Helper()
			if v, ok := extra[name]; !ok || v < lo || v > hi {
				t.Errorf("step at %v/s: %s = %v (present %v), want in [%v, %v]; extra %v", s.Rate, name, v, ok, lo, hi, extra)
			}
		}
		cpus := extra["host_cpus"]
		in("host_cpus", 1, 1024)
		in("host_cpu_busy", 0.001, 1)
		in("client_cpu", 0.001, cpus)
		in("member_cores", 1, cpus)
		in("proposals_pending_max", 0, 1000)
		in("proposals_unapplied_max", 0, 5000)
		for i := range members {
			in(fmt.Sprintf("member%d_cpu", i), 0.001, cpus)
		}
		if _, ok := extra[fmt.Sprintf("member%d_cpu", members)]; ok {
			t.Errorf("step at %v/s: a member%d_cpu with %d members", s.Rate, members, members)
		}
	}
}

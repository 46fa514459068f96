package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"etcdbench/internal/capacity/diskmodel"
	"etcdbench/internal/capacity/sweep"
	"etcdbench/internal/etcdcluster"
	"etcdbench/internal/etcdload"
	"etcdbench/internal/finding"
	"etcdbench/internal/result"
	"etcdbench/internal/testutil"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// The sweep bounds its WAL batches by the clients of check perf's load
// at each rate, and models its puts' shape: both are etcdload's presets.
func TestCapacityModelsCheckPerfLoads(t *testing.T) {
	for _, p := range etcdload.CheckPresets {
		if c := diskmodel.CheckPerfClients(p.Rate); c != p.Clients {
			t.Errorf("check perf %s: %d clients, the sweep bounds its batches at %d", p.Name, p.Clients, c)
		}
		if s := diskmodel.CheckPerfShape; s.KeyBytes != p.KeySize || s.ValueBytes != p.ValSize {
			t.Errorf("check perf %s: %d-byte keys and %d-byte values, the sweep models %+v", p.Name, p.KeySize, p.ValSize, s)
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
	testutil.WaitFor(t, 60*time.Second, "the second step", func() bool {
		_, err := os.Stat(filepath.Join(sd, "disk", "capacity", "step-2"))
		return err == nil || p.exited()
	})
	r := interrupt(t, p)
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

// capacity with its etcd side: the disk's sweep, then an embedded etcd
// on the same storage swept up to the disk's limit, and the estimate of etcd's
// rate from the two, with the cluster sizes it fits; then, with --members 3
// --peer-rtt, the same side on three members 20 ms apart, whose row is the
// answer, with the prediction for three machines from the single member's
// estimate; nothing left behind.
func TestCapacityCPUSide(t *testing.T) {
	// The disk side must carry its rate for the CPU side to run: in
	// memory (/dev/shm) its syncs cost nothing, so a busy machine's disk
	// (CI runs the packages' tests side by side) cannot fail it; the
	// disk's own behaviour is the other capacity tests'. A step carries
	// its rate only when its p99 was decided: 20 s at 150/s (3,000
	// syncs) decides; one rate keeps the test short.
	d := memBacking(t)
	writePrecious(t, d)
	before := snapshot(t, d)
	res := runBin(t, runOpts{timeout: 4 * time.Minute}, "capacity", "--dir", d, "--quick", "--start", "150", "--max-rate", "150",
		"--step-runtime", "20s", "--cpu-step", "1s", "--members", "3", "--peer-rtt", "20ms", "--no-progress", "-o", "json")
	if res.code != exitOK && res.code != exitFail {
		t.Fatalf("exit code %d; stderr:\n%s", res.code, res.stderr)
	}
	r, err := result.Read(strings.NewReader(res.stdout))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Workloads) != 3 || r.Workloads[0].Name != "capacity" || r.Workloads[1].Name != "cpu-capacity" || r.Workloads[2].Name != "cluster-capacity" {
		t.Fatalf("workloads %d: want capacity, cpu-capacity, cluster-capacity; stderr:\n%s", len(r.Workloads), res.stderr)
	}
	dc, cc := r.Workloads[0].Capacity, r.Workloads[1].Capacity
	if dc == nil || cc == nil || len(cc.Steps) == 0 || cc.Steps[0].Achieved <= 0 {
		t.Fatalf("capacities: disk %+v, cpu %+v", dc, cc)
	}
	// The CPU side climbs only as far as the disk's limit.
	top := dc.Upper
	if top == 0 {
		top = dc.Rate
	}
	for _, s := range cc.Steps {
		if s.Rate > top*2 {
			t.Errorf("cpu side step at %v/s, above the disk's %v/s (x2 for the probe)", s.Rate, top)
		}
	}
	// The answer is the row's: the lower of the disk's model and the
	// sweep of the members apart; the single member's estimate is where
	// the prediction starts.
	kc := r.Workloads[2].Capacity
	e := dc.Etcd
	if kc == nil || kc.Cluster == nil || kc.Etcd == nil || e == nil {
		t.Fatalf("cluster row %+v, answer %+v", kc, e)
	}
	row := kc.Cluster
	if e.Evidence == "" || e.DiskRate != dc.Rate || e.CPURate != kc.Rate || e.Rate != row.Rate || e.Rate > min(dc.Rate, kc.Rate) && e.LimitedBy != "none" ||
		!strings.HasPrefix(e.Evidence, "3 members 20ms apart on this machine") {
		t.Fatalf("answer %+v from disk %v and the row's sweep %v (row %+v)", e, dc.Rate, kc.Rate, row)
	}
	if row.Members != 3 || row.PeerRTTNs != int64(20*time.Millisecond) || row.Rate > 0 && row.RequestP50Ns < int64(20*time.Millisecond) {
		t.Errorf("row %+v: want 3 members 20ms apart, puts slower than the round trip", row)
	}
	if m := row.Machines; cc.Rate > 0 && (m == nil || m.OneMember != min(dc.Rate, cc.Rate) || !strings.Contains(m.Evidence, "predicted, not measured")) {
		t.Errorf("prediction %+v: want it from the single member's %v", m, min(dc.Rate, cc.Rate))
	}
	if len(dc.Sizes) != len(sweep.ClusterSizes) {
		t.Fatalf("cluster sizes %+v", dc.Sizes)
	}
	checkNoScratch(t, d)
	checkSnapshot(t, d, before)

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--cpu-step", "0.5s"}, "--cpu-step"},
		{[]string{"--peer-rtt", "50ms"}, "give 3 members"},
		{[]string{"--members", "3", "--cpu=false"}, "they need it (--cpu)"},
		{[]string{"--members", "3", "--peer-rtt", "2ms,far"}, "--peer-rtt \"far\""},
	} {
		bad := runBin(t, runOpts{}, append([]string{"capacity", "--dir", d}, c.args...)...)
		if bad.code != exitUsage || !strings.Contains(bad.stderr, c.want) {
			t.Errorf("capacity %v: exit %d, want %d with %q; stderr:\n%s", c.args, bad.code, exitUsage, c.want, bad.stderr)
		}
		checkOneErrorLine(t, bad.stderr)
	}
}

// Ctrl-C in the middle of `etcd capacity` on a cluster: the steps done so
// far are printed, marked interrupted, and no key of the run is left.
func TestEtcdCapacityInterruptedExternal(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, err := etcdcluster.Start(ctx, etcdcluster.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatalf("starting an etcd to test against: %v", err)
	}
	defer c.Close()
	nextStep := nextStepWatch(t, c.Endpoints())
	p := start(t, runOpts{}, "etcd", "capacity", "--endpoints", strings.Join(c.Endpoints(), ","), "--yes",
		"--step", "2s", "--start", "100", "--no-progress", "-o", "json")
	// The first step ends after 2 s; interrupt inside the second.
	nextStep()
	r := interrupt(t, p)
	cp := r.Workloads[0].Capacity
	if !r.Interrupted || cp == nil || !cp.Interrupted || len(cp.Steps) == 0 || cp.Steps[0].Rate != 100 {
		t.Fatalf("interrupted sweep's report: interrupted %v, capacity %+v", r.Interrupted, cp)
	}
	checkNoKeys(ctx, t, c.Endpoints())
}

// etcd capacity on three embedded members 10 ms apart: every member's CPU is in
// every step's evidence, with the cluster's backlog, the machine's CPU and
// the load generator's, and the answer is one of the named limits.
func TestEtcdCapacityThreeMembers(t *testing.T) {
	d := t.TempDir()
	res := runBin(t, runOpts{}, "etcd", "capacity", "--dir", d, "--members", "3", "--peer-rtt", "10ms", "--step", "1s", "--start", "100", "--max-rate", "200",
		"--resolution", "0.5", "--no-progress", "-o", "json")
	if res.code != exitOK && res.code != exitFail {
		t.Fatalf("exit code %d; stderr:\n%s", res.code, res.stderr)
	}
	r, err := result.Read(strings.NewReader(res.stdout))
	if err != nil {
		t.Fatal(err)
	}
	// One member first, then the row of three 10 ms apart, whose
	// prediction starts from the one member's answer.
	if len(r.Workloads) != 2 {
		t.Fatalf("%d workloads, want one member's and the row's", len(r.Workloads))
	}
	one, c := r.Workloads[0].Capacity, r.Workloads[1].Capacity
	if one == nil || one.Cluster != nil || c == nil || len(c.Steps) == 0 || c.Interrupted || c.Cluster == nil {
		t.Fatalf("etcd capacity result: one member %+v, row %+v", one, c)
	}
	checkEvidence(t, one, 1)
	checkEvidence(t, c, 3)
	if row := c.Cluster; row.Rate != c.Rate || row.PeerRTTNs != int64(10*time.Millisecond) || one.Rate > 0 && (row.Machines == nil || row.Machines.OneMember != one.Rate) {
		t.Errorf("row %+v: want the sweep's %v and a prediction from the one member's %v", row, c.Rate, one.Rate)
	}
	checkNoScratch(t, d)
	if left := memberPIDs(t, d); len(left) > 0 {
		t.Errorf("member processes %v still run after etcdbench exited", left)
	}
}

// checkEvidence checks a sweep's answer and that every step carries the
// evidence of every member, the machine and the load generator.
func checkEvidence(t *testing.T, c *result.Capacity, members int) {
	t.Helper()
	limits := []finding.Kind{finding.None, finding.CPU, finding.Disk, finding.Network, finding.Leader, finding.Unknown}
	switch {
	case !slices.Contains(limits, c.Bend) || c.Evidence == "":
		t.Errorf("limit %q (%s), want one of %v with its evidence", c.Bend, c.Evidence, limits)
	case c.Bend == finding.None && (c.Upper != 0 || c.Rate != 200):
		t.Errorf("no limit named, yet the answer is %v..%v", c.Rate, c.Upper)
	case c.Bend != finding.None && (c.Upper <= c.Rate || !strings.Contains(c.Evidence, fmt.Sprintf("at %.0f puts/s", c.Upper))):
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

// Ctrl-C during capacity's CPU side: the disk's answer and the CPU
// side's steps so far are reported, the embedded etcd is stopped and the
// scratch directory removed.
func TestCapacityInterruptedInCPUSide(t *testing.T) {
	// In memory, so that the disk side carries its rates on a busy
	// machine and the CPU side runs (see TestCapacityCPUSide).
	d := memBacking(t)
	writePrecious(t, d)
	before := snapshot(t, d)
	// One CPU step of 5 s (the disk carries 300/s, so the CPU side tries
	// only that): the interrupt falls inside it.
	p := start(t, runOpts{}, "capacity", "--dir", d, "--quick", "--start", "150", "--max-rate", "300", "--cpu-step", "5s", "--no-progress", "-o", "json")
	sd := waitScratch(t, p, d)
	testutil.WaitFor(t, 60*time.Second, "the CPU side's etcd", func() bool {
		_, err := os.Stat(filepath.Join(sd, "etcd", "member0"))
		return err == nil || p.exited()
	})
	waitLoadInWAL(t, p, filepath.Join(sd, "etcd")) // past its start, into its step
	r := interrupt(t, p)
	// The disk's answer is whole; the CPU side's steps so far follow it
	// (none when the interrupt came while its etcd was starting, on a
	// slow machine).
	if !r.Interrupted || len(r.Workloads) == 0 || r.Workloads[0].Capacity == nil || r.Workloads[0].Capacity.Interrupted {
		t.Fatalf("interrupted in the CPU side: interrupted %v, %d workloads", r.Interrupted, len(r.Workloads))
	}
	if len(r.Workloads) > 1 && (r.Workloads[1].Name != "cpu-capacity" || r.Workloads[1].Capacity == nil || !r.Workloads[1].Capacity.Interrupted) {
		t.Fatalf("the CPU side after an interrupt: %s %+v", r.Workloads[1].Name, r.Workloads[1].Capacity)
	}
	checkNoScratch(t, d)
	checkSnapshot(t, d, before)
	if left := memberPIDs(t, d); len(left) > 0 {
		t.Errorf("member processes %v still run after etcdbench exited", left)
	}
}

// interrupt sends SIGINT to p and returns the result it printed, checking
// it exits 130 with one error line.
func interrupt(t *testing.T, p *process) *result.Result {
	t.Helper()
	p.signal(t, syscall.SIGINT)
	res := p.wait(t)
	if res.code != 130 {
		t.Fatalf("exit code %d, want 130; stderr:\n%s", res.code, res.stderr)
	}
	checkOneErrorLine(t, res.stderr)
	r, err := result.Read(strings.NewReader(res.stdout))
	if err != nil {
		t.Fatalf("stdout is not a result: %v", err)
	}
	return r
}

// checkNoKeys checks that no key is left under etcdbench's prefix on the
// cluster of endpoints.
func checkNoKeys(ctx context.Context, t *testing.T, endpoints []string) {
	t.Helper()
	cli, err := clientv3.New(clientv3.Config{Endpoints: endpoints, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	resp, err := cli.Get(ctx, etcdload.PrefixRoot, clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		t.Fatal(err)
	}
	if resp.Count != 0 {
		t.Errorf("%d keys left under %s", resp.Count, etcdload.PrefixRoot)
	}
}

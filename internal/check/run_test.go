package check

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"etcdbench/internal/capacity"
	"etcdbench/internal/etcdcluster"
	"etcdbench/internal/result"
	"etcdbench/internal/testutil"
	"etcdbench/internal/verdict"
)

func TestMain(m *testing.M) {
	// The embedded etcd's members are this test binary, re-executed.
	if code, ok := etcdcluster.MaybeRunMember(); ok {
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// A budget with an etcd side states capacity's estimate, from capacity's
// code: the disk's sweep, then the etcd side on the check's embedded etcd
// after its loads; the estimate is the capacity workload's one
// capacity_min verdict, the summary's first line and its etcd_capacity
// figure.
func TestRunStatesCapacity(t *testing.T) {
	if testing.Short() {
		t.Skip("runs an embedded etcd")
	}
	load := LoadShape{Conns: 1, Clients: 2, Duration: time.Second, ValSize: 256, KeySpaceSize: 100}
	b := Budget{Name: "test", DiskPreset: "quick", Disk: []string{"capacity"}, Members: 1, Put: load, Range: load,
		Settings: map[string]map[string]string{"capacity": {"start": "100", "factor": "2", "resolution": "99", "max-rate": "200",
			"step-runtime": "1s", "step-min-runtime": "1s"}},
		EtcdCapacity: &capacity.Side{Step: time.Second, MaxHold: time.Second, Factor: 2, Resolution: 0.5, StepFlag: "--test-step"}}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// In memory: the disk sweep's 100/s must pass for an etcd side to
	// run, and a real disk shared with other packages' tests can fail it.
	res, err := Run(ctx, Config{Dir: testutil.MemDir(t, "etcdbench-check-test-"), Budget: b, Args: []string{"test"}})
	if err != nil {
		t.Fatal(err)
	}
	var disk, side, sum *result.Workload
	for i := range res.Workloads {
		switch w := &res.Workloads[i]; w.Name {
		case "capacity":
			disk = w
		case capacity.CPUCapacityName:
			side = w
		case "check":
			sum = w
		}
	}
	if disk == nil || side == nil || sum == nil {
		if disk != nil && disk.Capacity != nil {
			for _, s := range disk.Capacity.Steps {
				t.Logf("disk step %.0f/s %s %s", s.Rate, s.Status, s.Failed)
			}
		}
		t.Fatalf("workloads %v: want capacity, %s and check", names(res.Workloads), capacity.CPUCapacityName)
	}
	e := disk.Capacity.Etcd
	if e == nil || !(e.Rate > 0) || e.CPURate != side.Capacity.Rate || e.DiskRate != disk.Capacity.Rate {
		t.Fatalf("estimate %+v: want both sides' (disk %+v, etcd side %+v)", e, disk.Capacity, side.Capacity)
	}
	th := verdict.Defaults()
	n := 0
	for _, v := range disk.Verdicts {
		if v.Check == th.CapacityMin.ID {
			n++
			if v.Value != e.Rate {
				t.Errorf("capacity_min judged %v, want the estimate %v", v.Value, e.Rate)
			}
		}
	}
	if n != 1 || len(side.Verdicts) != 0 {
		t.Errorf("%d capacity_min verdicts, %d on the etcd side: want the one headline", n, len(side.Verdicts))
	}
	if !strings.HasPrefix(sum.Notes[0], "capacity: etcd on this disk and machine: ") {
		t.Errorf("summary's first note %q: want the estimate", sum.Notes[0])
	}
	if f := sum.Figure("etcd_capacity"); f == nil || f.Value != e.Rate {
		t.Errorf("figure etcd_capacity %+v, want %v", f, e.Rate)
	}
}

func names(ws []result.Workload) []string {
	var out []string
	for _, w := range ws {
		out = append(out, w.Name)
	}
	return out
}

// A budget with an etcd side and no disk sweep (check --quick) states the
// side's own estimate: on the side's workload, judged there once as
// capacity_min, first in the summary, without a disk model.
func TestRunQuickStatesSideEstimate(t *testing.T) {
	if testing.Short() {
		t.Skip("runs an embedded etcd")
	}
	load := LoadShape{Conns: 1, Clients: 2, Duration: time.Second, ValSize: 256, KeySpaceSize: 100}
	b := Budget{Name: "test", DiskPreset: "quick", Disk: []string{"wal"}, Members: 1, Put: load, Range: load,
		EtcdCapacity: &capacity.Side{Step: time.Second, MaxHold: time.Second, Factor: 2, Resolution: 0.5, StepFlag: "--test-step", NoProbe: true}}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := Run(ctx, Config{Dir: testutil.MemDir(t, "etcdbench-check-test-"), Budget: b, Args: []string{"test"}})
	if err != nil {
		t.Fatal(err)
	}
	var side, sum *result.Workload
	for i := range res.Workloads {
		switch w := &res.Workloads[i]; w.Name {
		case "capacity":
			t.Errorf("a disk sweep ran: %+v", w.Capacity)
		case capacity.CPUCapacityName:
			side = w
		case "check":
			sum = w
		}
	}
	if side == nil || sum == nil || side.Capacity == nil {
		t.Fatalf("workloads %v: want %s and check", names(res.Workloads), capacity.CPUCapacityName)
	}
	c := side.Capacity
	e := c.Etcd
	if e == nil || !e.WithoutDiskModel || e.Rate != c.Rate || e.CPURate != c.Rate || len(c.Steps) == 0 {
		t.Fatalf("estimate %+v: want the side's own (side %+v)", e, c)
	}
	if v := side.Verdicts; len(v) != 1 || v[0].Check != verdict.Defaults().CapacityMin.ID || v[0].Value != e.Rate {
		t.Errorf("side verdicts %+v: want capacity_min of the estimate alone", v)
	}
	if !strings.HasPrefix(sum.Notes[0], "capacity: etcd on this disk and machine: ") || !strings.Contains(sum.Notes[0], "the disk's model did not run") {
		t.Errorf("summary's first note %q: want the estimate, without a disk model", sum.Notes[0])
	}
	if f := sum.Figure("etcd_capacity"); f == nil || f.Value != e.Rate {
		t.Errorf("figure etcd_capacity %+v, want %v", f, e.Rate)
	}
	if f := side.Figure("etcd_rate_estimate"); f == nil || f.Value != e.Rate {
		t.Errorf("side figure etcd_rate_estimate %+v, want %v", f, e.Rate)
	}
}

// check's put load is capacity's seed load: the rate that seeds the
// etcd side's ladder comes from the same shape in both.
func TestPutLoadIsTheSeedLoad(t *testing.T) {
	seed := capacity.SeedLoad(time.Second)
	for _, b := range Budgets() {
		p := b.Put.Load(seed.Op)
		if p.Conns != seed.Conns || p.Clients != seed.Clients || p.ValSize != seed.ValSize || p.KeySpaceSize != seed.KeySpaceSize || p.KeySize != seed.KeySize {
			t.Errorf("%s: put load %d conns, %d clients, %d/%d bytes, %d keys; the seed load %d, %d, %d/%d, %d", b.Name,
				p.Conns, p.Clients, p.KeySize, p.ValSize, p.KeySpaceSize, seed.Conns, seed.Clients, seed.KeySize, seed.ValSize, seed.KeySpaceSize)
		}
	}
}

package etcdrun

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"etcdbench/internal/capacity"
	"etcdbench/internal/disk"
	"etcdbench/internal/etcdcluster"
	"etcdbench/internal/etcdload"
	"etcdbench/internal/etcdload/observe"
	"etcdbench/internal/finding"
	"etcdbench/internal/result"
	"etcdbench/internal/run"
	"etcdbench/internal/units"
	"etcdbench/internal/verdict"
)

// DiskCapacity is one `capacity` run: the disk's capacity sweep and,
// with CPU, the same sweep as `etcd capacity` on an embedded etcd whose
// fsyncs are off, which finds what this machine's CPUs carry; the two
// give the put rate an etcd on this disk and machine sustains.
type DiskCapacity struct {
	Dir string
	// Sweep is the disk's capacity sweep (disk's capacity workload).
	Sweep disk.Workload
	// CPU runs the CPU side; CPUStep is how long each of its steps runs.
	CPU     bool
	CPUStep time.Duration
	// Progress is a terminal for the live line, or nil.
	Progress io.Writer
	Args     []string
}

// CPUCapacityName is the CPU side's workload.
const CPUCapacityName = "cpu-capacity"

// CPUCapacityDescription says what the CPU side measures, for reports.
const CPUCapacityDescription = "the highest put rate this machine's CPUs carry for etcd: the etcd capacity sweep on an embedded etcd started with --unsafe-no-fsync (its syncs cost nothing, so the storage is out of the way), the load generator on the same machine"

// cpuStart is the CPU side's first rate: below what any machine that runs
// etcd carries, so the ladder climbs, in few steps.
const cpuStart = 1200

// MeasureCapacity runs the disk's sweep and then, unless the disk
// carries nothing or CPU is off, the CPU side, in one scratch directory,
// and adds the estimate to the disk's answer. The CPU side climbs only
// as far as the disk's limit: it need only say whether the CPUs carry
// what the disk does. An interrupted run returns what it measured with
// the context's error.
func MeasureCapacity(ctx context.Context, c DiskCapacity) (res *result.Result, err error) {
	ws := []disk.Named{{Name: "capacity", Workload: c.Sweep}}
	need := disk.SpaceNeeded(ws)
	if c.CPU {
		need = max(need, cpuSpace(c.CPUStep))
	}
	r, err := run.Open(c.Dir, need, "free some space, or use --quick", c.Args)
	if err != nil {
		return nil, err
	}
	defer r.Close(&err)
	diskDir := filepath.Join(r.Scratch.Path, "disk")
	if err := os.Mkdir(diskDir, 0o700); err != nil {
		return nil, err
	}
	total := 1
	if c.CPU {
		total = 2
	}
	prog := run.NewProgress(c.Progress, total)
	env := disk.Env{Dir: diskDir, Root: "/", Facts: r.Result.Environment, Thresholds: verdict.Defaults(), OnSecond: disk.ShowOn(prog)}
	wls, err := disk.RunSuite(ctx, env, ws, prog.Start)
	if err == nil {
		err = os.RemoveAll(diskDir)
	}
	if d := diskCapacity(wls); err == nil && c.CPU && d != nil && d.Rate > 0 {
		prog.Start(1, CPUCapacityName)
		var w result.Workload
		w, err = cpuCapacity(ctx, filepath.Join(r.Scratch.Path, "etcd"), d, c.CPUStep, prog)
		err = cpuSideFailed(ctx, &wls[0], err)
		if w.Capacity != nil {
			wls = append(wls, w)
			if err == nil && !w.Capacity.Interrupted {
				d.Etcd = Estimate(d, w.Capacity)
				wls[0].Figures = append(wls[0].Figures, result.Figure{Name: "etcd_rate_estimate", Value: d.Etcd.Rate, Unit: "ops/s",
					Description: "put rate an etcd on this disk and machine is expected to sustain: the lower of the disk's and the CPUs' sides (limited by " + string(d.Etcd.LimitedBy) + ")"})
			}
		}
	}
	prog.Clear()
	if err != nil && !run.Interrupted(ctx, err) {
		return nil, err
	}
	return r.Finish(ctx, wls, err)
}

// cpuSideFailed keeps the disk's answer when the CPU side ends in an
// error other than an interruption (its etcd would not start, a put
// failed): the error becomes a note on the disk's workload, the
// estimate is not made, and the run goes on to its report.
func cpuSideFailed(ctx context.Context, disk *result.Workload, err error) error {
	if err == nil || run.Interrupted(ctx, err) {
		return err
	}
	disk.Notes = append(disk.Notes, "the CPU side (an embedded etcd without fsync) failed, so etcd's rate on this disk and machine is not estimated: "+strings.Join(strings.Fields(err.Error()), " "))
	return nil
}

func diskCapacity(wls []result.Workload) *result.Capacity {
	for i := range wls {
		if wls[i].Capacity != nil {
			return wls[i].Capacity
		}
	}
	return nil
}

// cpuSpace is the CPU side's room on one member: the keys of a step at
// twice xl's rate (each step's keys are deleted after it; a machine whose
// CPUs carry more writes this much again per doubling, into the same
// scratch directory, which the free-space check does not foresee).
func cpuSpace(step time.Duration) int64 {
	p := etcdload.CheckPresets[len(etcdload.CheckPresets)-1]
	p.Rate *= capacity.ProbeFactor
	return CheckSpace(p, step, 1)
}

// cpuCapacity runs the etcd capacity sweep on an embedded member without
// fsync in dir, up to the disk's limit d.
func cpuCapacity(ctx context.Context, dir string, d *result.Capacity, step time.Duration, prog *run.Progress) (result.Workload, error) {
	if err := os.Mkdir(dir, 0o700); err != nil {
		return result.Workload{}, err
	}
	cluster, err := StartEmbedded(ctx, etcdcluster.Options{Dir: dir, Members: 1, UnsafeNoFsync: true})
	if err != nil {
		return result.Workload{}, err
	}
	defer cluster.Close()
	top := d.Upper
	if top == 0 {
		top = d.Rate // the disk carried every rate tried: so far, no further
	}
	start := min(cpuStart, d.Rate)
	sc := capacity.Config{
		Start: start, Factor: 2, Min: min(10, start), Max: top, Resolution: 0.15, Confidence: 0.95,
		Unit: "puts/s", LimitNs: (10 * time.Millisecond).Nanoseconds(), Marks: disk.CheckPerfMarks, Sizes: disk.ClusterSizes,
		Criterion: "etcdctl check perf's rules (no failed put, throughput > 90 % of the rate, slowest <= 0.5 s, stddev <= 0.1 s), over " + step.String() + " per step, on an etcd without fsync",
	}
	l := etcdload.CheckPresets[0].Load()
	l.Total, l.Duration = 0, step
	l.Client.Endpoints, l.OnSecond = cluster.Endpoints(), prog.Requests()
	bo := etcdload.BenchOptions{Targets: observe.EmbeddedTargets(cluster.MetricsURLs()), Thresholds: verdict.Defaults()}
	bench := CapacityBench(CapacitySpec{Sweep: sc, Step: step, Thresholds: verdict.CheckPerfDefaults()})
	o, err := bench(ctx, l, bo)
	if o == nil {
		return result.Workload{}, err
	}
	w := o.Workload
	w.Name, w.Description = CPUCapacityName, CPUCapacityDescription
	// Without fsync there is no WAL fsync to judge: the verdict is the
	// disk sweep's, this side only bounds the estimate.
	w.Verdicts = []verdict.Verdict{}
	w.Notes = append(w.Notes, fmt.Sprintf("embedded etcd with --unsafe-no-fsync (data in %s, removed): its WAL and backend skip fsync, so the storage costs it almost nothing and this machine's %d CPUs, shared by etcd and the load generator, set what it carries", dir, runtime.NumCPU()))
	return w, err
}

// Estimate combines the disk's sweep d and the CPU side's c into the put
// rate an etcd on both sustains: the lower side, since etcd needs both
// (its syncs and its CPU work overlap, so near both limits at once it
// carries somewhat less than either alone).
func Estimate(d, c *result.Capacity) *result.CapacityEstimate {
	e := &result.CapacityEstimate{DiskRate: d.Rate, DiskUpper: d.Upper, CPURate: c.Rate, CPUUpper: c.Upper}
	switch {
	case c.Upper > 0 && (d.Upper == 0 || c.Rate < d.Rate):
		e.Rate, e.Upper, e.LimitedBy = c.Rate, c.Upper, finding.CPU
		e.Evidence = fmt.Sprintf("the CPUs carry %s puts/s (an etcd without fsync fails check perf's rules at %s/s) while the disk carries %s writes/s: etcd's CPU work, not the disk, sets the rate on this machine",
			fmtRate(c.Rate), fmtRate(c.Upper), atLeast(d))
	case d.Upper > 0:
		e.Rate, e.Upper, e.LimitedBy = d.Rate, d.Upper, finding.Disk
		e.Evidence = fmt.Sprintf("the disk carries %s-%s writes/s (%s) while the CPUs carry %s puts/s: the disk sets the rate",
			fmtRate(d.Rate), fmtRate(d.Upper), d.Bend, atLeast(c))
	default:
		e.Rate, e.LimitedBy = min(d.Rate, c.Rate), finding.None
		e.Evidence = fmt.Sprintf("neither side failed below the rates tried: the disk carries at least %s writes/s, the CPUs at least %s puts/s", fmtRate(d.Rate), fmtRate(c.Rate))
	}
	return e
}

// atLeast is a side's answer in words: "at least R" when nothing failed.
func atLeast(c *result.Capacity) string {
	if c.Upper == 0 {
		return "at least " + fmtRate(c.Rate)
	}
	return fmtRate(c.Rate) + "-" + fmtRate(c.Upper)
}

func fmtRate(r float64) string { return units.FormatValue(r, "count") }

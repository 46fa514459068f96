package capacityrun

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"strings"
	"time"

	"etcdbench/internal/capacity"
	"etcdbench/internal/disk"
	"etcdbench/internal/etcdcapacity"
	"etcdbench/internal/etcdcluster"
	"etcdbench/internal/etcdload"
	"etcdbench/internal/etcdload/observe"
	"etcdbench/internal/etcdrun"
	"etcdbench/internal/result"
	"etcdbench/internal/run"
	"etcdbench/internal/session"
	"etcdbench/internal/verdict"
)

// Config is one `capacity` run: the disk's capacity sweep and, with
// CPU, the same sweep as `etcd capacity` on an embedded etcd whose
// fsyncs are off, which finds what this machine's CPUs carry; the two
// give the put rate an etcd on this disk and machine sustains.
type Config struct {
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

// Run runs the disk's sweep and then, unless the disk carries nothing
// or CPU is off, the CPU side, in one session, and adds the estimate to
// the disk's answer. The CPU side climbs only as far as the disk's
// limit: it need only say whether the CPUs carry what the disk does. An
// interrupted run returns what it measured with the context's error.
func Run(ctx context.Context, c Config) (res *result.Result, err error) {
	ws := []disk.Named{{Name: "capacity", Workload: c.Sweep}}
	need := disk.SpaceNeeded(ws)
	total := 1
	if c.CPU {
		need = max(need, cpuSpace(c.CPUStep))
		total = 2
	}
	s, err := session.Open(session.Options{Dir: c.Dir, Need: need, Hint: "free some space, or use --quick", Args: c.Args, Progress: c.Progress, Steps: total})
	if err != nil {
		return nil, err
	}
	defer s.Close(&err)
	wls, err := s.Disk(ctx, ws)
	if d := diskCapacity(wls); err == nil && c.CPU && d != nil && d.Rate > 0 {
		s.Progress.Start(1, CPUCapacityName)
		var w result.Workload
		w, err = cpuCapacity(ctx, s, d, c.CPUStep)
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
	if err != nil && !run.Interrupted(ctx, err) {
		return nil, err
	}
	return s.Finish(ctx, wls, err)
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
	return etcdrun.CheckSpace(p, step, 1)
}

// cpuCapacity runs the etcd capacity sweep on the session's embedded
// etcd, one member without fsync, up to the disk's limit d.
func cpuCapacity(ctx context.Context, s *session.Session, d *result.Capacity, step time.Duration) (result.Workload, error) {
	cluster, err := s.StartEtcd(ctx, etcdcluster.Options{Members: 1, UnsafeNoFsync: true})
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
	l.Client.Endpoints, l.OnSecond = cluster.Endpoints(), s.Progress.Requests()
	bo := etcdload.BenchOptions{Targets: observe.EmbeddedTargets(cluster.MetricsURLs()), Thresholds: verdict.Defaults()}
	bench := etcdcapacity.CapacityBench(etcdcapacity.CapacitySpec{Sweep: sc, Step: step, Thresholds: verdict.CheckPerfDefaults()})
	o, err := bench(ctx, l, bo)
	if o == nil {
		return result.Workload{}, err
	}
	w := o.Workload
	w.Name, w.Description = CPUCapacityName, CPUCapacityDescription
	// Without fsync there is no WAL fsync to judge: the verdict is the
	// disk sweep's, this side only bounds the estimate.
	w.Verdicts = []verdict.Verdict{}
	w.Notes = append(w.Notes, fmt.Sprintf("embedded etcd with --unsafe-no-fsync (data in %s, removed): its WAL and backend skip fsync, so the storage costs it almost nothing and this machine's %d CPUs, shared by etcd and the load generator, set what it carries", s.EtcdDir(), runtime.NumCPU()))
	return w, err
}

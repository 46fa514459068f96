package check

import (
	"context"
	"errors"
	"fmt"
	"io"

	"etcdbench/internal/capacity"
	"etcdbench/internal/capacity/diskmodel"
	"etcdbench/internal/disk"
	"etcdbench/internal/etcdcluster"
	"etcdbench/internal/etcdload"
	"etcdbench/internal/etcdload/observe"
	"etcdbench/internal/result"
	"etcdbench/internal/run"
	"etcdbench/internal/session"
	"etcdbench/internal/trace"
	"etcdbench/internal/verdict"
)

// Config is one validated check.
type Config struct {
	// Dir is the directory on the disk to check.
	Dir    string
	Budget Budget
	// Trace times the embedded etcd's own fdatasyncs with eBPF when
	// allowed.
	Trace bool
	// Progress is a terminal for the live line, or nil.
	Progress io.Writer
	Args     []string
	// RunLonger is the command's flag for a longer run, for the advice of
	// an undecided verdict (verdict.Thresholds.RunLonger).
	RunLonger string
}

// Workloads builds the budget's disk workloads from its preset.
func Workloads(b Budget) ([]disk.Named, error) {
	p, err := disk.PresetNamed(b.DiskPreset)
	if err != nil {
		return nil, err
	}
	specs := map[string]disk.Spec{}
	for _, s := range diskmodel.Specs() {
		specs[s.Name] = s
	}
	var ws []disk.Named
	for _, name := range b.Disk {
		spec, ok := specs[name]
		if !ok {
			return nil, fmt.Errorf("check budget %s names an unknown disk workload %q", b.Name, name)
		}
		w, err := spec.Build(p, disk.NewSettings(b.Settings[name]))
		if errors.Is(err, disk.ErrBadParam) {
			return nil, run.Usage(err)
		}
		if err != nil {
			return nil, err
		}
		ws = append(ws, disk.Named{Name: name, Workload: w})
	}
	return ws, nil
}

// Run runs the budget's disk workloads, then the embedded etcd's loads, in
// one scratch directory that is removed before it returns, and adds the
// summary: the findings and the prediction. An interrupted check returns
// what it measured with the context's error.
func Run(ctx context.Context, c Config) (res *result.Result, err error) {
	ws, err := Workloads(c.Budget)
	if err != nil {
		return nil, err
	}
	steps := len(ws) + 2
	need := max(disk.SpaceNeeded(ws), session.EmbeddedSpace(c.Budget.Members))
	if side := c.Budget.EtcdCapacity; side != nil {
		steps++
		need = max(need, capacity.SideSpace(side.Step))
	}
	s, err := session.Open(session.Options{
		Dir: c.Dir, Need: need, Hint: "free some space, or use --quick",
		Args: c.Args, Progress: c.Progress, Steps: steps, RunLonger: c.RunLonger,
	})
	if err != nil {
		return nil, err
	}
	defer s.Close(&err)
	wls, dm, err := s.Disk(ctx, ws)
	var measured Measured
	if err == nil {
		var etcdWls []result.Workload
		etcdWls, measured, err = runEtcd(ctx, c, s, len(ws), capacityWorkload(wls))
		wls = append(wls, etcdWls...)
	}
	measured.Disk = dm
	if err != nil && !run.Interrupted(ctx, err) {
		return nil, err
	}
	if w := capacityWorkload(wls); w != nil {
		capacity.Answer(w, etcdSide(wls), nil)
	} else if w := sideWorkload(wls); w != nil && w.Capacity.Etcd != nil {
		// No disk model (check --quick): the side's estimate, judged on
		// the side.
		capacity.Answer(w, nil, nil)
		measured.Estimate = w.Capacity
	}
	if len(wls) > 0 {
		est := dm.Capacity
		if est == nil {
			est = measured.Estimate // check --quick: the side's
		}
		Advise(wls, est)
		wls = append(wls, Summarize(wls, measured, err != nil)) // err is an interruption here
	}
	return s.Finish(ctx, wls, err)
}

// capacityWorkload is the disk's capacity sweep among ws, or nil.
func capacityWorkload(ws []result.Workload) *result.Workload {
	for i := range ws {
		if ws[i].Capacity != nil && ws[i].Name != capacity.CPUCapacityName {
			return &ws[i]
		}
	}
	return nil
}

// etcdSide is the etcd side's sweep among ws, or nil.
func etcdSide(ws []result.Workload) *result.Capacity {
	if w := sideWorkload(ws); w != nil {
		return w.Capacity
	}
	return nil
}

// sideWorkload is the etcd side's workload among ws, or nil.
func sideWorkload(ws []result.Workload) *result.Workload {
	for i := range ws {
		if ws[i].Name == capacity.CPUCapacityName && ws[i].Capacity != nil {
			return &ws[i]
		}
	}
	return nil
}

// runEtcd starts the session's embedded etcd and runs the budget's put
// and range loads on it, the put load traced by eBPF when asked and
// allowed, then, when the budget has one and the disk's capacity sweep
// diskCap carried a rate, capacity's etcd side; the progress line counts
// them from first. What the put load measured of the members and the
// trace comes back typed.
func runEtcd(ctx context.Context, c Config, s *session.Session, first int, diskCap *result.Workload) (out []result.Workload, m Measured, err error) {
	cluster, err := s.StartEtcd(ctx, etcdcluster.Options{Members: c.Budget.Members})
	if err != nil {
		return nil, m, err
	}
	defer cluster.Close()
	prog := s.Progress
	bo := etcdload.BenchOptions{Targets: observe.EmbeddedTargets(cluster.MetricsURLs()), Thresholds: verdict.Defaults()}
	for i, op := range []etcdload.Op{etcdload.OpPut, etcdload.OpRange} {
		shape := c.Budget.Put
		if op == etcdload.OpRange {
			shape = c.Budget.Range
		}
		l := shape.Load(op)
		l.Client.Endpoints, l.RunID = cluster.Endpoints(), etcdload.NewRunID()
		prog.Start(first+i, l.Name())
		l.OnSecond = prog.Requests()
		var stopTrace func() (*trace.WALSyncs, string)
		if pids := cluster.PIDs(); op == etcdload.OpPut && c.Trace && len(pids) == 1 {
			stopTrace = trace.Member(ctx, pids[0])
		}
		o, err := etcdload.Bench(ctx, l, bo)
		if stopTrace != nil {
			syncs, why := stopTrace()
			if o != nil {
				m.Traced = syncs
				addTraced(&o.Workload, syncs, why)
			}
		}
		if o != nil {
			out = append(out, o.Workload)
			if op == etcdload.OpPut {
				m.PutMembers, m.PutLoad = o.Members, o.Workload.Name
			}
		}
		if err != nil {
			return out, m, err
		}
	}
	if c.Budget.EtcdCapacity == nil || (diskCap != nil && diskCap.Capacity.Interrupted) {
		return out, m, nil
	}
	if diskCap != nil && diskCap.Capacity.Rate == 0 && diskCap.Capacity.Upper == 0 {
		diskCap.Notes = append(diskCap.Notes, capacity.NoSideNote)
		return out, m, nil
	}
	prog.Start(first+2, capacity.CPUCapacityName)
	side := *c.Budget.EtcdCapacity
	side.Trace = c.Trace
	var model *result.Capacity
	if diskCap != nil {
		model = diskCap.Capacity
	}
	// The side's ladder starts from what the put load carried (capped
	// by the disk's rate when its model ran).
	if len(out) > 0 {
		side.Start = capacity.SeedStart(out[0])
	}
	w, err := capacity.EtcdSide(ctx, s, cluster, model, side)
	done, err := capacity.SideDone(ctx, diskCap, w, err)
	if done != nil {
		out = append(out, *done)
	}
	return out, m, err
}

// addTraced adds the put load's traced WAL syncs to its workload, named
// here: as TracedLatency and, without their waits for a CPU,
// TracedDiskLatency, with a note; or a note saying why there are none.
func addTraced(w *result.Workload, syncs *trace.WALSyncs, why string) {
	if syncs == nil {
		w.Notes = append(w.Notes, "the embedded etcd's fdatasyncs: "+why+"; the prediction uses etcd's histogram")
		return
	}
	all, own := syncs.All, syncs.WithoutCPUWait
	all.Name, own.Name = TracedLatency, TracedDiskLatency
	w.Latencies = append(w.Latencies, all, own)
	w.Notes = append(w.Notes, fmt.Sprintf("%s: the embedded etcd's %d WAL fdatasyncs, timed by eBPF in the kernel during the load", TracedLatency, all.Count)+
		fmt.Sprintf("; %s: the same without the time their thread waited for a CPU", TracedDiskLatency))
}

// closedLoop are the disk workloads that write and sync one entry (or
// one group of clients' entries) as fast as the storage allows: fio's
// recipe, whose p99 is the community's go/no-go test.
var closedLoop = map[string]bool{"wal": true, "wal-under-load": true}

// Advise marks the closed-loop WAL tests' p99 FAILs advisory (counted as
// a WARN in the overall result) when capacity's estimate (or, without an
// etcd side, the disk's sweep) showed the storage and machine carry at
// least check perf's s within etcd's limits: an etcd
// at its rate is within its limits there, and the closed-loop failure is
// a warning about bursts above that rate and a slow member's catch-up,
// which run closed-loop. Without a capacity, or below s, they stay FAILs.
func Advise(ws []result.Workload, c *result.Capacity) {
	th := verdict.Defaults()
	if c == nil || c.Interrupted {
		return
	}
	rate, what := c.Rate, "writes/s within etcd's limits (the capacity sweep)"
	if c.Etcd != nil {
		rate, what = c.Etcd.Rate, "puts/s within etcd's limits (capacity's estimate for an etcd on this storage and machine)"
	}
	if rate < th.CapacityMin.Limit {
		return
	}
	for i := range ws {
		if !closedLoop[ws[i].Name] {
			continue
		}
		for j := range ws[i].Verdicts {
			v := &ws[i].Verdicts[j]
			if v.Status != verdict.Fail || (v.Check != th.WALFsyncP99.ID && v.Check != verdict.CheckWALFsyncUnderLoad) {
				continue
			}
			v.Advisory = true
			v.Detail += fmt.Sprintf("; counted as a WARN: the storage carries %.0f %s, at least check perf's s, so an etcd at its rate keeps its limits; this closed-loop test, one sync at a time as fast as the storage allows, is what a burst above that rate or a slow member catching up does", rate, what)
		}
	}
}

package capacity

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"strings"
	"time"

	"etcdbench/internal/capacity/etcdside"
	"etcdbench/internal/capacity/sweep"
	"etcdbench/internal/disk"
	"etcdbench/internal/etcdcluster"
	"etcdbench/internal/etcdload"
	"etcdbench/internal/etcdload/observe"
	"etcdbench/internal/etcdrun"
	"etcdbench/internal/finding"
	"etcdbench/internal/result"
	"etcdbench/internal/run"
	"etcdbench/internal/session"
	"etcdbench/internal/verdict"
)

// Config is one `capacity` run: the disk's capacity sweep and, with
// CPU, the same sweep as `etcd capacity` on an embedded etcd on the same
// storage (the etcd side, named cpu-capacity), which finds what an etcd
// whose syncs and CPU work share this machine carries; the lower of the
// two is the put rate an etcd on this disk and machine sustains.
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
	// RunLonger is the command's flag for a longer run, for the advice of
	// an undecided verdict (verdict.Thresholds.RunLonger).
	RunLonger string
	// Apart are members put apart (--members 3 --peer-rtt R1,R2...): after
	// the single member's side, the etcd side runs again on each, a
	// cluster-capacity workload a round trip, and the answer is the first
	// one's (ClusterRows).
	Apart []etcdcluster.Options
}

// NoSideNote says why the etcd side did not run after a disk sweep that
// neither carried nor failed a rate.
const NoSideNote = "the etcd side did not run: the disk's model neither carried nor failed a rate, so there is no rate to try an etcd at"

// CPUCapacityName is the CPU side's workload.
const CPUCapacityName = "cpu-capacity"

// CPUCapacityDescription says what the etcd side measures, for reports.
const CPUCapacityDescription = "the highest put rate an etcd on this storage and machine carries: the etcd capacity sweep on an embedded etcd in the scratch directory, its fsyncs on, up to the disk side's limit; its syncs and its CPU work share the machine as a real etcd's do (named cpu-capacity for what it mostly finds: where the disk carries more than the CPUs, the CPUs)"

// sideStart is the etcd side's light start: etcdctl check perf's s (150
// puts/s), where `etcd capacity`'s ladder starts too, so that the side
// climbs from a light load as `etcd capacity` and the truth of
// bench/capacity-vs-etcd (etcd's benchmark, rates doubling) do. The side
// starts there unless a put load on its member carried twice a higher
// rung within etcd's limits (SeedStart), and climbs again from there when
// a higher start fails. A side
// that started at 1,200 (or the disk's rate) and descended from a
// failing start answered 25 puts/s (FAIL) beside two busy loops and fio
// writing 1,000 times a second, 11 of its 14 steps failing from 1,200 down
// (2,400 and 4,800 among them, far over what the member carried): on a
// busy machine every step may fail on a stall, a light load more often
// than a heavier one (its threads sleep between syncs and wait for a CPU
// at each wake-up), so a descent that runs until a step passes lands
// below what the member carries, while a climb turns only on a failure
// that repeats.
func sideStart() float64 { return verdict.CheckPerfLoads[0].Rate }

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
		total = 2 + len(c.Apart)
		for _, o := range c.Apart {
			need = max(need, etcdrun.CheckSpace(spacePreset(), c.CPUStep, o.Members))
		}
	}
	s, err := session.Open(session.Options{Dir: c.Dir, Need: need, Hint: "free some space, or use --quick", Args: c.Args, Progress: c.Progress, Steps: total, RunLonger: c.RunLonger})
	if err != nil {
		return nil, err
	}
	defer s.Close(&err)
	others, err := neighbours(ctx, neighbourWindow)
	if err != nil {
		return s.Finish(ctx, nil, err)
	}
	wls, _, err := s.Disk(ctx, ws)
	d := diskCapacity(wls)
	switch {
	case err != nil || d == nil || d.Interrupted:
	case !c.CPU:
		wls[0].Notes = append(wls[0].Notes, "the etcd side did not run (--cpu=false): the answer is the disk's model alone, whose writes cost the device what etcd's puts do but whose CPU work is not etcd's")
	case d.Rate == 0 && d.Upper == 0:
		wls[0].Notes = append(wls[0].Notes, NoSideNote)
	default:
		s.Progress.Start(1, CPUCapacityName)
		var w result.Workload
		var side *result.Workload
		w, err = cpuCapacity(ctx, s, d, CapacitySide(c.CPUStep))
		if side, err = SideDone(ctx, &wls[0], w, err); side != nil {
			wls = append(wls, *side)
		}
		if err == nil && len(c.Apart) > 0 && d.Etcd != nil && len(wls) > 1 {
			var rows []result.Workload
			rows, err = clusterSides(ctx, s, &wls[0], wls[1].Capacity, c.CPUStep, c.Apart)
			wls = append(wls, rows...)
		}
	}
	if d != nil && !d.Interrupted {
		Answer(&wls[0], answerSide(wls), others)
	}
	if err != nil && !run.Interrupted(ctx, err) {
		return nil, err
	}
	return s.Finish(ctx, wls, err)
}

// SideDone takes the etcd side's workload w and error err into the
// disk's workload: a side that ended in an error other than an
// interruption leaves a note on the disk's workload and no estimate;
// a side that finished sets the estimate (Estimate) on the disk's
// capacity with its figure. It returns the side's workload to report,
// or nil, and the error that ends the run (an interruption only).
//
// With no disk workload (disk nil: check --quick runs no disk model) the
// estimate is the side's alone (Estimate with no disk), set on the
// side's own capacity and figures, and Answer judges it there.
func SideDone(ctx context.Context, disk *result.Workload, w result.Workload, err error) (*result.Workload, error) {
	if w.Capacity == nil {
		if disk == nil {
			disk = &w
		}
		return nil, cpuSideFailed(ctx, disk, err)
	}
	at := disk
	if at == nil {
		at = &w
	}
	err = cpuSideFailed(ctx, at, err)
	if err != nil || w.Capacity.Interrupted {
		return &w, err
	}
	// The estimate lives on the disk's capacity, or on the side's own
	// without one.
	on, model, what := w.Capacity, (*result.Capacity)(nil), "the etcd side's alone: the disk's model did not run"
	if disk != nil {
		on, model, what = disk.Capacity, disk.Capacity, "the lower of the disk's and the CPUs' sides"
	}
	if d := on; d != nil {
		d.Etcd = Estimate(model, w.Capacity)
		at.Figures = append(at.Figures, result.Figure{Name: "etcd_rate_estimate", Value: d.Etcd.Rate, Unit: "ops/s",
			Description: "put rate an etcd on this disk and machine is expected to sustain: " + what + " (limited by " + string(d.Etcd.LimitedBy) + ")"})
	}
	return &w, err
}

// answerSide is the etcd side whose answer is the run's: the first
// cluster row's sweep when members were put apart (ClusterRows), else the
// single member's; nil when none ran.
func answerSide(wls []result.Workload) *result.Capacity {
	for _, w := range wls {
		if w.Name == ClusterCapacityName && w.Capacity != nil && w.Capacity.Cluster != nil {
			return w.Capacity
		}
	}
	if len(wls) > 1 {
		return wls[1].Capacity
	}
	return nil
}

// Answer makes a run's one headline for "how much" on the disk's
// capacity workload w: the put rate an etcd on this storage and machine
// carries (the estimate, or the disk's answer alone when the etcd side
// cpu did not run), judged once as capacity_min where the disk sweep's
// own verdict stood; the two sides' answers stay as its evidence. What
// neighbours took of the machine (nil: not watched) ends the estimate's
// evidence. capacity and check both answer through it.
func Answer(w *result.Workload, cpu *result.Capacity, others *result.Neighbours) {
	d := w.Capacity
	if d == nil || d.Interrupted {
		return
	}
	rate, side := d.Rate, d
	if e := d.Etcd; e != nil {
		rate = e.Rate
		if cpu != nil && e.Rate == cpu.Rate && e.LimitedBy != finding.Disk {
			side = cpu
		}
		if others != nil {
			others.WriteIOPS = d.BackgroundWriteIOPS
			e.Neighbours = others
			e.Evidence += neighbourWords(others)
		}
	}
	th := verdict.Defaults()
	level := side.Confidence
	if side.StepConfidence == 0 {
		level = 0 // the etcd side's fixed-length steps, judged by rules
	}
	v := verdict.JudgeEtcdRate(th.CapacityMin, th.CapacityHeavy, rate, side.Upper == 0 && side.UndecidedAbove() > 0, d.Decided && (cpu == nil || cpu.Decided), level, side.Criterion)
	if rate == side.Rate {
		v = verdict.JudgeUnstable(v, rate, side.Upper, side.PassedAbove(), unstableWhy(others))
		if d.Etcd != nil {
			d.Etcd.PassedAbove = side.PassedAbove()
		}
	}
	for i := range w.Verdicts {
		if w.Verdicts[i].Check == th.CapacityMin.ID {
			w.Verdicts[i] = v
			return
		}
	}
	w.Verdicts = append(w.Verdicts, v)
}

// neighbourWindow is how long the machine is watched, idle, for what
// other processes take of its CPUs.
const neighbourWindow = time.Second

// neighbours is what other processes took of the machine's CPUs over d,
// while this process is idle (nil when /proc/stat cannot be read).
func neighbours(ctx context.Context, d time.Duration) (*result.Neighbours, error) {
	m := observe.StartCPU("/")
	select {
	case <-time.After(d):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	own, host := m.Stop()
	if host == nil {
		return nil, nil
	}
	busy := host.Busy * float64(host.CPUs)
	if own != nil {
		busy -= float64(own.UserNs+own.SystemNs) / float64(d)
	}
	return &result.Neighbours{CPUs: max(busy, 0), HostCPUs: host.CPUs}, nil
}

// unstableWhy says what other processes took of the machine, for an
// unstable answer's verdict ("" when nothing worth naming or not
// watched).
func unstableWhy(n *result.Neighbours) string {
	if n == nil {
		return ""
	}
	var took []string
	if n.CPUs >= 0.1 {
		took = append(took, fmt.Sprintf("%.0f %% of the machine's %d CPUs", 100*n.CPUs/float64(max(n.HostCPUs, 1)), n.HostCPUs))
	}
	if n.WriteIOPS >= 10 {
		took = append(took, fmt.Sprintf("%.0f writes/s on the device", n.WriteIOPS))
	}
	if len(took) == 0 {
		return ""
	}
	return " (other processes took " + strings.Join(took, " and ") + " while etcdbench was idle)"
}

// neighbourWords ends the estimate's evidence with what other processes
// took, when they took a share worth naming: a tenth of a CPU, or ten
// writes per second.
func neighbourWords(n *result.Neighbours) string {
	var took []string
	if n.CPUs >= 0.1 {
		took = append(took, fmt.Sprintf("kept %.1f of the machine's %d CPUs busy", n.CPUs, n.HostCPUs))
	}
	if n.WriteIOPS >= 10 {
		took = append(took, fmt.Sprintf("wrote %.0f times a second to the device", n.WriteIOPS))
	}
	if len(took) == 0 {
		return ""
	}
	return "; other processes " + strings.Join(took, " and ") + " while etcdbench was idle before the sweep: the answer is what an etcd carries beside them, and it carries more on a machine they leave alone"
}

// cpuSideFailed keeps the disk's answer when the CPU side ends in an
// error other than an interruption (its etcd would not start, a put
// failed): the error becomes a note on the disk's workload, the
// estimate is not made, and the run goes on to its report.
func cpuSideFailed(ctx context.Context, disk *result.Workload, err error) error {
	if err == nil || run.Interrupted(ctx, err) {
		return err
	}
	disk.Notes = append(disk.Notes, "the etcd side (an embedded etcd on this storage) failed, so etcd's rate on this disk and machine is not estimated: "+strings.Join(strings.Fields(err.Error()), " "))
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
func cpuSpace(step time.Duration) int64 { return etcdrun.CheckSpace(spacePreset(), step, 1) }

// SideSpace is the free space an etcd side of steps of step needs on its
// member (cpuSpace), for a session that runs one after other work
// (check's).
func SideSpace(step time.Duration) int64 { return cpuSpace(step) }

// spacePreset is the largest step the CPU side's free space is checked
// for: xl's shape at twice its rate.
func spacePreset() etcdload.CheckPreset {
	p := etcdload.CheckPresets[len(etcdload.CheckPresets)-1]
	p.Rate *= sweep.ProbeFactor
	return p
}

// Side is the etcd side's budget: capacity's (CapacitySide) or a
// shorter one for check's.
type Side struct {
	// Step is how long each step runs, MaxHold the longest a held one
	// runs (0: a real etcd's ten seconds).
	Step, MaxHold time.Duration
	// Factor and Resolution are the ladder's ratio and the bisection's
	// end, as `etcd capacity`'s flags.
	Factor, Resolution float64
	// StepFlag is the flag that lengthens the steps, for advice.
	StepFlag string
	// NoProbe leaves out the step above the knee that shows what bends
	// the curve (sweep.Config.NoProbe).
	NoProbe bool
	// Trace times the member's WAL syncs with eBPF in each step, where
	// the machine allows, so that a WAL failure is named the disk's only
	// when the syncs are slow without their waits for a CPU.
	Trace bool
	// Recheck, when set, runs the answer's step again for this long
	// when it passed near a limit in a short, unheld step
	// (etcdside.CapacitySpec.Recheck).
	Recheck time.Duration
	// Start is the ladder's first rate (0: check perf's s, 150 puts/s);
	// a higher one that fails falls back to a climb from 150
	// (sweep.Config.From).
	Start float64
	// PeerRTT and Heartbeat are the members' round trip apart and
	// heartbeat interval (0: none, etcd's default), which the side's
	// limits are named against (etcdside.CapacitySpec).
	PeerRTT, Heartbeat time.Duration
}

// CapacitySide is `capacity`'s etcd side with steps of step (--cpu-step).
func CapacitySide(step time.Duration) Side {
	return Side{Step: step, Factor: etcdside.DefaultFactor, Resolution: etcdside.DefaultResolution, StepFlag: "--cpu-step", Trace: true}
}

// cpuCapacity starts the session's embedded etcd, one member on the
// storage, and runs the etcd side on it (EtcdSide).
func cpuCapacity(ctx context.Context, s *session.Session, d *result.Capacity, side Side) (result.Workload, error) {
	cluster, err := s.StartEtcd(ctx, etcdcluster.Options{Members: 1})
	if err != nil {
		return result.Workload{}, err
	}
	defer cluster.Close()
	start, note, err := seedStart(ctx, cluster)
	if err != nil {
		return result.Workload{}, err
	}
	side.Start = start
	w, err := EtcdSide(ctx, s, cluster, d, side)
	w.Notes = append(w.Notes, note)
	return w, err
}

// EtcdSide runs the etcd capacity sweep on cluster, the session's
// embedded etcd (one member on the storage, its fsyncs on), up to the
// disk's limit d. Its fsyncs are on, not off to leave the CPUs alone to
// set the rate, because a real etcd's syncs and CPU work overlap: on a
// 2,000-IOPS volume the disk's model and etcd 3.4 made the same writes
// per put at 1,233 puts/s (1.62 in the cgroup, 0.79 WAL fsyncs), yet
// etcd's backend commit p99 was 26.8 ms and the model's 8.2 ms, its put
// p99 22 ms against 5 ms (bench/device-cost) - the time etcd's
// goroutines wait for a CPU between the I/Os. With its fsyncs on, this
// side measures that overlap instead of modelling it.
//
// With no disk model (d nil: check --quick runs none) the side climbs up
// to check perf's xl, the most a check answers.
func EtcdSide(ctx context.Context, s *session.Session, cluster *etcdcluster.Cluster, d *result.Capacity, side Side) (result.Workload, error) {
	first := sideStart()
	if side.Start > 0 {
		first = side.Start
	}
	top, start := verdict.CheckPerfLoads[len(verdict.CheckPerfLoads)-1].Rate, first
	if d != nil {
		top = d.Upper
		if top == 0 {
			top = d.Rate // the disk carried every rate tried: so far, no further
		}
		start = min(first, d.Rate)
		if start == 0 {
			// The disk's model carried none of its rates: the etcd side
			// starts no higher than the lowest it failed.
			start = min(first, top)
		}
	}
	start = min(start, top)
	sc := etcdside.SweepConfig(start, top, side.Factor, side.Resolution, side.Step, verdict.Defaults(), "the member's own", ", on an embedded etcd on this storage")
	sc.NoProbe = side.NoProbe
	if start > sideStart() {
		// A start placed higher by an earlier measurement (check's put
		// load) that fails climbs again from check perf's s.
		sc.From = sideStart()
	}
	l := etcdload.CheckPresets[0].Load()
	l.Total, l.Duration = 0, side.Step
	l.Client.Endpoints, l.OnSecond = cluster.Endpoints(), s.Progress.Requests()
	bo := etcdload.BenchOptions{Targets: observe.EmbeddedTargets(cluster.MetricsURLs()), PIDs: cluster.PIDs(), Thresholds: verdict.Defaults()}
	bench := etcdside.CapacityBench(etcdside.CapacitySpec{Sweep: sc, Step: side.Step, Thresholds: verdict.CheckPerfDefaults(), Embedded: true,
		MaxStepPuts: spacePreset().Puts(side.Step), StepFlag: side.StepFlag, MaxHold: side.MaxHold, Recheck: side.Recheck, Trace: side.Trace,
		PeerRTT: side.PeerRTT, Heartbeat: side.Heartbeat})
	o, err := bench(ctx, l, bo)
	if o == nil {
		return result.Workload{}, err
	}
	w := o.Workload
	w.Name, w.Description = CPUCapacityName, CPUCapacityDescription
	// The disk's verdict is the disk sweep's: this side bounds the
	// estimate, and its members' verdicts stay in its steps.
	w.Verdicts = []verdict.Verdict{}
	w.Notes = append(w.Notes, fmt.Sprintf("embedded etcd with its data in %s (removed), fsyncs on: its syncs go to the storage under test and its CPU work to this machine's %d CPUs, shared with the load generator, as a real etcd's are", s.EtcdDir(), runtime.NumCPU()))
	return w, err
}

// SeedStart is the first rate of an etcd side that a closed-loop put
// load put ran before on the same member (check's put load, or
// capacity's seed load, SeedLoad): the highest rung of
// capacity's ladder (check perf's s, 150 puts/s, doubled) at most half
// the rate the put load's 16 clients carried, when the load met every
// rule it was judged by; else check perf's s, where capacity's side
// starts. The rungs below a rate the closed-loop load carried with its
// p99s within etcd's limits pass, and climbing them would cost the check
// a step each, held up to 8 s near the limits (2,400 instead of 150 for a
// put load of 7,900 puts/s on the development VM's quiet disk: four steps
// fewer; on its disk, whose WAL p99 is 4-6 ms at light rates, the
// default check's climb from 150 took 44-59 s, two or three of its first
// four steps held). A put load that failed starts the climb at 150, as on
// a busy node, where a ladder started high descends on luck; a higher
// start that fails climbs again from 150 (capacity.Side.Start).
func SeedStart(put result.Workload) float64 {
	first := verdict.CheckPerfLoads[0].Rate
	for _, v := range put.Verdicts {
		if v.Status != verdict.Pass {
			return first
		}
	}
	if len(put.Verdicts) == 0 {
		return first
	}
	r := first
	for r*2 <= put.OpsPerSec/2 {
		r *= 2
	}
	return r
}

// SeedLoad is the closed-loop put load whose rate seeds capacity's etcd
// side (SeedStart): check's put load's shape (16 clients over 4
// connections, 1 KiB values over 10,000 keys, the shape of
// wal-under-load's group-committed clients), for d.
func SeedLoad(d time.Duration) etcdload.Load {
	l := etcdload.DefaultLoad(etcdload.OpPut)
	l.Conns, l.Clients, l.Duration, l.Total = 4, 16, d, 0
	l.ValSize, l.KeySpaceSize = 1024, 10000
	return l
}

// seedDuration is how long the seed load runs: a WAL fsync p99 from
// thousands of syncs on a quiet disk, a second of puts on any.
const seedDuration = 2 * time.Second

// seedStart runs the seed load on cluster and returns the side's first
// rate (SeedStart) and a note that says where it came from; check perf's
// s when the load could not run.
func seedStart(ctx context.Context, cluster *etcdcluster.Cluster) (float64, string, error) {
	l := SeedLoad(seedDuration)
	l.Client.Endpoints, l.RunID = cluster.Endpoints(), etcdload.NewRunID()
	o, err := etcdload.Bench(ctx, l, etcdload.BenchOptions{Targets: observe.EmbeddedTargets(cluster.MetricsURLs()), Thresholds: verdict.Defaults()})
	if ctx.Err() != nil {
		return 0, "", ctx.Err()
	}
	if err != nil || o == nil {
		return sideStart(), fmt.Sprintf("the ladder started at check perf's s, %.0f puts/s: the seed load did not run (%v)", sideStart(), err), nil
	}
	start := SeedStart(o.Workload)
	how := "met every rule it was judged by"
	for _, v := range o.Workload.Verdicts {
		if v.Status != verdict.Pass {
			how = "failed " + v.Title
			break
		}
	}
	return start, fmt.Sprintf("the ladder started at %.0f puts/s: a %v closed-loop put load of %d clients on the member carried %.0f puts/s and %s (a start at most half a rate that passed, else check perf's s; a start above 150 that fails climbs again from 150)",
		start, seedDuration, l.Clients, o.Workload.OpsPerSec, how), nil
}

package etcdside

import (
	"context"
	"fmt"
	"time"

	"etcdbench/internal/capacity/sweep"
	"etcdbench/internal/etcdload"
	"etcdbench/internal/result"
	"etcdbench/internal/stats"
	"etcdbench/internal/trace"
	"etcdbench/internal/units"
	"etcdbench/internal/verdict"
)

// CapacitySpec is one `etcd capacity` sweep: open-loop puts of etcdctl
// check perf's shape at rising rates, each step judged by check perf's
// rules and the members' own disk histograms.
type CapacitySpec struct {
	Sweep sweep.Config
	// Step is how long each step's puts run (check perf's rules need a
	// fixed time, not an adaptive one).
	Step       time.Duration
	Thresholds verdict.CheckPerfThresholds
	// Embedded says this process started the members, on this machine:
	// its CPUs are theirs (an external cluster's machines are not
	// measured, only its members' own /metrics). External members found
	// listening on this machine (BenchOptions.PIDs) share its CPUs too,
	// and a single one is traced.
	Embedded bool
	// Heartbeat is the members' heartbeat interval (0: etcd's default),
	// which the peer round trip is judged against.
	Heartbeat time.Duration
	// Limits are where a resource is named the limit.
	Limits LimitThresholds
	// Trace times a single embedded member's WAL syncs with eBPF in each
	// step, with and without their waits for a CPU, when allowed.
	Trace bool
	// MaxStepPuts is the most puts one step may write (0: no bound): the
	// free space was checked for a step of that many keys, and a held
	// step runs no longer than that allows.
	MaxStepPuts int64
	// StepFlag is the flag that lengthens the steps, for advice ("":
	// etcd capacity's --step; capacity's etcd side has --cpu-step).
	StepFlag string
	// MaxHold is the longest a held step runs (0: a real etcd's ten
	// seconds); check's shorter budget holds its steps less long.
	MaxHold time.Duration
	// PeerRTT is the round trip the embedded members were put apart by
	// (etcdcluster.Options.PeerRTT; 0: none, or not known): a put's wait
	// beyond its leader's sync is named the network's when the round
	// trip explains it.
	PeerRTT time.Duration
	// Recheck, when set, runs the answer's step again for this long when
	// it passed within two histogram buckets of a limit in a shorter,
	// unheld step (check --quick): its answer is then judged on a real
	// etcd's ten seconds, as capacity's held steps are. Whatever it is,
	// an answer's step whose p99 passed in its limit's own bucket is a
	// coin flip (atLimit) and is judged on the majority of
	// sweep.Windows runs, each as long as a held step (Recheck or the
	// longest hold).
	Recheck time.Duration
}

// longestHold is MaxHold or its default.
func (s CapacitySpec) longestHold() time.Duration {
	if s.MaxHold > 0 {
		return s.MaxHold
	}
	return maxHold
}

// CapacityDescription says what `etcd capacity` does, for reports.
const CapacityDescription = "the highest put rate this etcd sustains within etcdctl check perf's rules and etcd's disk limits: open-loop steps of rising rate (check perf's keys, values and clients), a ladder then a bisection around the knee"

// CapacityBench returns the Bench of `etcd capacity`: the sweep run on
// the cluster the load's endpoints name, one etcdctl-check-like step per
// rate, each with its own run id (its keys deleted after it), returned as
// one workload.
func CapacityBench(s CapacitySpec) func(context.Context, etcdload.Load, etcdload.BenchOptions) (*etcdload.Outcome, error) {
	return func(ctx context.Context, l etcdload.Load, o etcdload.BenchOptions) (*etcdload.Outcome, error) {
		start := time.Now()
		o.Sample = sampleEvery(s.Step)
		// A step's disk histograms are judged from stepMinObservations:
		// at the default 3 s a step holds about 30 backend commits, and
		// with the default 100 its commit p99 was never judged (a step
		// passed 2,620 puts/s on a 2,000-IOPS volume with a commit p99 of
		// 29.7 ms, where a real etcd failed from 1,233).
		o.MinObservations, o.DecideEarly = stepMinObservations, true
		// Each step deletes its keys: the next step starts once their
		// commit landed. On network-block (commits of two slow syncs each)
		// that commit was one more slow commit in the next step's hundred
		// - 27 ms where a real etcd read 24.5 ms at the same rate.
		o.Settle = true
		if s.Limits == (LimitThresholds{}) {
			s.Limits = LimitDefaults()
		}
		var notTraced string // why the members' syncs are not traced
		// One trace for the whole sweep, each step a window of it:
		// attached and detached around every step, the tracer cost a step
		// about 0.7 s and missed its first syncs.
		var follower *trace.Follower
		switch {
		case !s.Trace:
		case len(o.PIDs) != 1:
			notTraced = "the members' WAL syncs are traced only for one embedded member"
		default:
			follower = trace.Follow(ctx, o.PIDs[0])
			defer follower.Close()
			if why := follower.Why(); why != "" {
				notTraced = "the member's WAL syncs: " + why
			}
		}
		var held []string // the steps run again for longer, and why
		// The probe above the knee does not move the answer: it is not
		// held.
		var phase string
		sc := s.Sweep
		recheckFor := s.Recheck
		if recheckFor <= 0 {
			recheckFor = s.longestHold()
		}
		sc.Recheck = func(st result.CapacityStep) bool {
			short := s.Recheck > 0 && st.HeldFromNs == 0 && time.Duration(st.DurationNs) < s.Recheck
			return short && nearLimit(st, o.Thresholds) || atLimit(st, o.Thresholds)
		}
		sc.OnStep = func(i int, rate float64, p string) {
			phase = p
			if s.Sweep.OnStep != nil {
				s.Sweep.OnStep(i, rate, p)
			}
		}
		// once runs one step of rate for d.
		once := func(ctx context.Context, rate float64, d time.Duration) (*etcdload.Outcome, *trace.WALSyncs, error) {
			p := presetAt(rate, d)
			sl := p.Load()
			sl.Client, sl.OnSecond, sl.RunID = l.Client, l.OnSecond, etcdload.NewRunID()
			var stopTrace func() (*trace.WALSyncs, string)
			if follower != nil && notTraced == "" {
				stopTrace = follower.Window()
			}
			out, err := etcdload.Check(ctx, etcdload.CheckSpec{Preset: p, Load: sl, Thresholds: s.Thresholds}, o)
			var traced *trace.WALSyncs
			if stopTrace != nil {
				traced, _ = stopTrace() // a step without syncs has no trace
			}
			return out, traced, err
		}
		// bound is d, no longer than the step puts the free space was
		// checked for allow at rate.
		bound := func(d time.Duration, rate float64) time.Duration {
			if s.MaxStepPuts > 0 {
				d = min(d, units.FromSeconds(float64(s.MaxStepPuts)/rate).Truncate(time.Second))
			}
			return d
		}
		step := func(ctx context.Context, rate, _ float64) (result.CapacityStep, StepEvidence, error) {
			first := s.Step
			if phase == sweep.PhaseRecheck {
				first = max(s.Step, bound(recheckFor, rate)) // the answer's step again, as long as a held one
			}
			out, traced, err := once(ctx, rate, first)
			var heldFrom time.Duration
			if phase != sweep.PhaseProbe && phase != sweep.PhaseRecheck {
				d, why := hold(out, o.Thresholds, s.Step, s.longestHold())
				if d = bound(d, rate); err == nil && d > s.Step {
					held = append(held, fmt.Sprintf("%.0f (%s)", rate, why))
					heldFrom = s.Step
					out, traced, err = once(ctx, rate, d)
				}
			}
			if out == nil {
				return result.CapacityStep{}, StepEvidence{}, err
			}
			st, ev := stepOf(out)
			ev.Clients = etcdload.CheckPresetAt(rate).Clients
			st.HeldFromNs = heldFrom.Nanoseconds()
			ev.addTrace(traced)
			st.Extra = ev.Figures()
			return st, ev, err
		}
		c, evidence, err := sweep.SweepWith(ctx, sc, step)
		if c == nil {
			return nil, err
		}
		if !c.Interrupted {
			lim, words := limitingResource(c, evidence, limitContext{embedded: s.Embedded || len(o.PIDs) > 0, started: s.Embedded, heartbeat: s.Heartbeat, peerRTT: s.PeerRTT, th: s.Limits, stepFlag: s.StepFlag})
			c.Bend, c.Evidence = lim.Kind, words+sweep.RetriedNote(c)+sweep.RecheckNote(c)
		}
		// Steps of fixed length judged by rules: no stop rule, no
		// confidence level to share.
		c.Confidence, c.StepConfidence = 0, 0
		w := capacityWorkload(c, s, time.Since(start))
		if notTraced != "" {
			w.Notes = append(w.Notes, notTraced)
		}
		if len(held) > 0 {
			w.Notes = append(w.Notes, heldNote(held, s.Step, s.longestHold()))
		}
		return &etcdload.Outcome{Workload: w, Start: start, End: time.Now()}, err
	}
}

// stepMinObservations is the fewest observations of a member's disk
// histogram a step's p99 is judged from: 20 backend commits are 2 s of
// them; a failing ladder step is repeated, so one slow commit does not
// set the answer.
const stepMinObservations = 20

// presetAt is check perf's load shape at rate (etcdload.CheckPresetAt)
// for d.
func presetAt(rate float64, d time.Duration) etcdload.CheckPreset {
	p := etcdload.CheckPresetAt(rate)
	p.Name, p.Alias = "capacity", ""
	p.Rate, p.Duration = rate, d
	return p
}

func capacityWorkload(c *result.Capacity, s CapacitySpec, took time.Duration) result.Workload {
	w := result.Workload{
		Name: "etcd-capacity", Description: CapacityDescription,
		Parameters: map[string]any{
			"start": s.Sweep.Start, "factor": s.Sweep.Factor, "min_rate": s.Sweep.Min, "max_rate": s.Sweep.Max,
			"resolution": s.Sweep.Resolution, "confidence": s.Sweep.Confidence, "step_duration_ns": s.Step.Nanoseconds(),
			"threshold_ns": units.FromSeconds(verdict.Defaults().WALFsyncP99.Limit).Nanoseconds(),
		},
		Stop:       result.Stop{Mode: "sweep", Reason: fmt.Sprintf("%d steps", len(c.Steps))},
		Latencies:  []result.Latency{},
		Series:     []stats.SecondSample{},
		Verdicts:   []verdict.Verdict{},
		Capacity:   c,
		DurationNs: took.Nanoseconds(),
	}
	var busy time.Duration
	for _, st := range c.Steps {
		w.Ops += int64(st.Achieved * time.Duration(st.DurationNs).Seconds())
		busy += time.Duration(st.DurationNs)
	}
	if busy > 0 {
		w.OpsPerSec = float64(w.Ops) / busy.Seconds()
	}
	w.Figures = append(w.Figures, result.Figure{Name: "capacity_rate", Value: c.Rate, Unit: "ops/s", Description: "highest put rate whose step met every rule"})
	if c.Upper > 0 {
		w.Figures = append(w.Figures, result.Figure{Name: "capacity_upper", Value: c.Upper, Unit: "ops/s", Description: "lowest put rate whose step failed"})
	}
	if !c.Interrupted {
		th := verdict.Defaults()
		v := verdict.JudgeCapacity(th.CapacityMin, th.CapacityHeavy, c.Rate, c.Decided, c.Confidence, c.Criterion)
		// A rate that passed above the lowest failing one: unstable, never
		// a FAIL, as capacity's estimate judges it.
		w.Verdicts = append(w.Verdicts, verdict.JudgeUnstable(v, c.Rate, c.Upper, c.PassedAbove(), ""))
	}
	return w
}

package tune

import (
	"context"
	"etcdbench/internal/etcdcluster"
	"fmt"

	"etcdbench/internal/etcdload/observe"
	"etcdbench/internal/etcdrun"
	"etcdbench/internal/result"
	"etcdbench/internal/stats"
	"etcdbench/internal/sysinfo"
)

// Run is one run of one combination.
type Run struct {
	Slot
	// Order is the run's place in the schedule, from 1.
	Order int
	// Result is what the run measured, its load workload marked with the
	// combination (parameters tune_combination, tune_settings,
	// tune_round, tune_order).
	Result *result.Result
	// Load is the run's load workload (etcd-put...) in Result.Workloads,
	// or nil.
	Load *result.Workload
	// Request is the load's request latency, typed, or nil.
	Request *stats.Summary
	// Members are the run's etcd members as observed around its load.
	Members []observe.Member
	// Failover is the time to a new leader after the leader was killed,
	// after the load (three members), or nil.
	Failover *etcdcluster.Failover
	// Saved is the file the run was saved to, if any.
	Saved string
}

// Workload returns the run's load workload (etcd-put...), or nil.
func (r Run) Workload() *result.Workload { return r.Load }

// RunFunc runs combination c once on a fresh embedded etcd and returns
// its result and its members as observed. An interrupted run returns its
// partial measurement, if any, with ctx's error.
type RunFunc func(ctx context.Context, c Combination, s Slot) (*etcdrun.Measurement, error)

// Plan is a checked tune: the combinations and how often to run each.
type Plan struct {
	Combinations []Combination
	Rounds       int
	// Load describes the load, for the table's heading.
	Load string
}

// NewPlan expands the varies over base into combinations (see Expand) and
// checks the rounds.
func NewPlan(base Config, vs []Vary, rounds int) (Plan, error) {
	if rounds < 1 {
		return Plan{}, fmt.Errorf("%w: --rounds %d: want at least 1 (3 or more to tell differences from noise)", ErrBadVary, rounds)
	}
	cs, err := Expand(base, vs)
	if err != nil {
		return Plan{}, err
	}
	l := base.Load
	load := fmt.Sprintf("%s, %d clients on %d connection(s), %s (each run on a fresh embedded etcd)", l.Name(), l.Clients, l.Conns, l.Plan())
	return Plan{Combinations: cs, Rounds: rounds, Load: load}, nil
}

// Schedule is the plan's order of runs (see the function Schedule).
func (p Plan) Schedule() []Slot { return Schedule(len(p.Combinations), p.Rounds) }

// Execute runs the schedule with run, one run at a time. After each run
// it marks the run's load workload with the combination and calls done
// (to save it, to show progress), whose error stops the tune. It stops at
// the first error; an interrupted run is kept (with Result.Interrupted)
// when run returned a result. It returns the runs so far.
func (p Plan) Execute(ctx context.Context, run RunFunc, done func(Run) error) ([]Run, error) {
	var runs []Run
	for i, slot := range p.Schedule() {
		if err := ctx.Err(); err != nil {
			return runs, err
		}
		c := p.Combinations[slot.Combination]
		m, err := run(ctx, c, slot)
		r := Run{Slot: slot, Order: i + 1}
		if m != nil {
			r.Result, r.Load, r.Request, r.Members, r.Failover = m.Result, m.Load, m.Request, m.Members, m.Failover
		}
		res := r.Result
		if w := r.Workload(); w != nil {
			if w.Parameters == nil {
				w.Parameters = map[string]any{}
			}
			w.Parameters["tune_combination"] = c.ID()
			w.Parameters["tune_settings"] = c.Settings()
			w.Parameters["tune_round"] = slot.Round
			w.Parameters["tune_order"] = r.Order
			w.Notes = append(w.Notes, fmt.Sprintf("tune: combination %s (%s), round %d of %d, run %d of %d",
				c.ID(), c.Label(), slot.Round, p.Rounds, r.Order, len(p.Combinations)*p.Rounds))
		}
		if res != nil {
			if derr := done(r); derr != nil && err == nil {
				err = derr
			}
			runs = append(runs, r)
		}
		if err != nil {
			return runs, fmt.Errorf("%s round %d (%s): %w", c.ID(), slot.Round, c.Label(), err)
		}
	}
	return runs, nil
}

// Combine returns the workloads of the whole tune, every run's load
// workload in the order they ran and the summary's last, and its
// environment, the first run's (each saved run has its own).
func Combine(s Summary, runs []Run) ([]result.Workload, sysinfo.Facts) {
	var wls []result.Workload
	var env sysinfo.Facts
	first := true
	dirs := map[string]bool{}
	for _, run := range runs {
		if run.Result == nil {
			continue
		}
		if first {
			env, first = run.Result.Environment, false
		}
		dirs[run.Result.Environment.Dir] = true
		if w := run.Workload(); w != nil {
			wls = append(wls, *w)
		}
	}
	sw := s.Workload()
	if len(dirs) > 1 {
		sw.Notes = append(sw.Notes, "the runs used different directories: the environment is the first run's; each saved run (--save-dir) has its own")
	}
	return append(wls, sw), env
}

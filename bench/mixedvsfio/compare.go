package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"time"

	"etcdbench/bench/internal/cmp"
)

// The etcdbench engine every fio engine of --fio-engines is compared with,
// and the pread/pwrite engine both tools have.
const (
	etcdEngine  = "io_uring"
	psyncEngine = "psync"
)

// jsonFile is the layout of the --json file.
type jsonFile struct {
	Started   time.Time    `json:"started_at"`
	Dir       string       `json:"dir"`
	Params    params       `json:"params"`
	Fio       string       `json:"fio_version"`
	Etcdbench string       `json:"etcdbench"`
	Runs      []cmp.RawRun `json:"runs"`
	Summary   []cmp.Row    `json:"summary,omitempty"`
	Error     string       `json:"error,omitempty"`
}

func runName(tool, engine string) string { return tool + " " + engine }

// plan returns the runs of a round in their odd-round order, and the pairs
// that compare them. The fio engines alternate with etcdbench's io_uring
// run so that each pair runs next to each other in every round.
func plan(o options, r runner) ([]cmp.Step, []cmp.Pair) {
	etcd := runName(cmp.ToolEtcdbench, etcdEngine)
	etcdStep := cmp.Step{Run: etcd, Do: func(ctx context.Context) (cmp.Measurement, json.RawMessage, error) {
		return r.runEtcdbench(ctx, etcdEngine)
	}}
	fioStep := func(engine string) cmp.Step {
		return cmp.Step{Run: runName(cmp.ToolFio, engine), Do: func(ctx context.Context) (cmp.Measurement, json.RawMessage, error) {
			return r.runFio(ctx, engine)
		}}
	}
	var steps []cmp.Step
	var pairs []cmp.Pair
	for i, e := range o.FioEngines {
		steps = append(steps, fioStep(e))
		if i == 0 {
			steps = append(steps, etcdStep)
		}
		pairs = append(pairs, cmp.Pair{Name: etcdEngine + " vs fio " + e, Etcd: etcd, Fio: runName(cmp.ToolFio, e)})
	}
	if o.Psync {
		if !slices.Contains(o.FioEngines, psyncEngine) {
			steps = append(steps, fioStep(psyncEngine))
		}
		ep := runName(cmp.ToolEtcdbench, psyncEngine)
		steps = append(steps, cmp.Step{Run: ep, Do: func(ctx context.Context) (cmp.Measurement, json.RawMessage, error) {
			return r.runEtcdbench(ctx, psyncEngine)
		}})
		pairs = append(pairs, cmp.Pair{Name: psyncEngine + " vs fio " + psyncEngine, Etcd: ep, Fio: runName(cmp.ToolFio, psyncEngine)})
	}
	return steps, pairs
}

// targetSource says where the targets come from.
const targetSource = "etcdbench goal: the IOPS fio gets from the same job (within 5 %) at no more CPU per I/O; read p99 is informational"

// figure returns a Measurement's figure, NaN when it has none.
func figure(name string) func(cmp.Measurement) float64 {
	return func(m cmp.Measurement) float64 {
		if v, ok := m.Figures[name]; ok {
			return v
		}
		return math.NaN()
	}
}

// metrics are what every pair compares, with their targets.
func metrics() []cmp.Metric {
	return []cmp.Metric{
		{Name: "total IOPS", Unit: cmp.UnitRate, Value: figure("iops"),
			Target: &cmp.Target{Metric: "total IOPS", Lo: 0.95, Source: targetSource}},
		{Name: "CPU per I/O", Unit: cmp.UnitDuration, Value: func(m cmp.Measurement) float64 { return float64(m.CPUPerOp()) },
			Target: &cmp.Target{Metric: "CPU per I/O", Hi: 1.0, Source: targetSource}},
		{Name: "read p99", Unit: cmp.UnitDuration, Value: figure("read_p99_ns")},
	}
}

// columns are a round's table.
func columns() []cmp.Column {
	dur := func(f func(cmp.Measurement) time.Duration) func(cmp.Measurement) string {
		return func(m cmp.Measurement) string { return cmp.FmtDur(f(m)) }
	}
	return []cmp.Column{
		{Head: "IOPS", Value: func(m cmp.Measurement) string { return cmp.FmtValue(cmp.UnitRate, figure("iops")(m)) }},
		{Head: "read p99", Value: func(m cmp.Measurement) string { return cmp.FmtValue(cmp.UnitDuration, figure("read_p99_ns")(m)) }},
		{Head: "runtime", Value: dur(func(m cmp.Measurement) time.Duration { return m.Runtime })},
		{Head: "wall", Value: dur(func(m cmp.Measurement) time.Duration { return m.Wall })},
		{Head: "CPU", Value: dur(func(m cmp.Measurement) time.Duration { return m.CPU })},
		{Head: "fio start-up CPU", Value: dur(func(m cmp.Measurement) time.Duration {
			if m.Base == nil {
				return 0
			}
			return m.Base.CPU
		})},
		{Head: "etcdbench self CPU", Value: dur(func(m cmp.Measurement) time.Duration { return m.SelfCPU })},
		{Head: "CPU/IO", Value: dur(cmp.Measurement.CPUPerOp)},
	}
}

// run does the whole comparison.
func run(ctx context.Context, o options, stdout, stderr io.Writer) (err error) {
	env, err := cmp.Setup(ctx, o.Common, name, stderr)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := env.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	r := runner{fio: env.Fio, etcdbench: env.Etcdbench, dir: env.Dir, p: o.params}
	out := jsonFile{Started: time.Now().UTC(), Dir: env.Dir, Params: o.params, Fio: env.FioVersion, Etcdbench: env.Etcdbench}
	defer cmp.SaveJSON(o.Abs(o.JSON), &out, &out.Error, &err)

	steps, pairs := plan(o, r)
	ms := metrics()
	fmt.Fprintf(stdout, "%s: %s vs etcdbench disk mixed, --bs %s --size %s --runtime %s --numjobs %d --iodepth %d --rwmixread %d, %d rounds, on %s\n",
		name, cmp.OrUnknown(env.FioVersion), o.BS, o.Size, o.Runtime, o.NumJobs, o.IODepth, o.RWMixRead, o.Rounds, env.Dir)
	fmt.Fprintf(stdout, "CPU: child rusage. CPU/IO: fio (CPU - the same job with --runtime=%s, i.e. its start-up) / I/Os; etcdbench its own CPU of the timed part / I/Os\n\n", baselineRuntime)

	var rounds []cmp.Round
	for n := 1; n <= o.Rounds; n++ {
		rd, raws, err := cmp.RunRound(ctx, n, o.Rounds, steps, stderr)
		out.Runs = append(out.Runs, raws...)
		if err != nil {
			return fmt.Errorf("round %d: %w", n, err)
		}
		rounds = append(rounds, rd)
		if err := cmp.RenderRound(stdout, rd, o.Rounds, columns(), pairs, ms); err != nil {
			return err
		}
	}
	out.Summary = cmp.SummarizePairs(rounds, pairs, ms)
	if err := cmp.RenderSummary(stdout, len(rounds), out.Summary, nil); err != nil {
		return err
	}
	return cmp.RenderFooter(stdout, out.Summary, targetSource)
}

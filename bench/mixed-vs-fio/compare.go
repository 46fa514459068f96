package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
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
type jsonFile = cmp.JSONFile[params]

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

// metrics are what every pair compares, with their targets.
func metrics() []cmp.Metric {
	return []cmp.Metric{
		{Name: "total IOPS", Unit: cmp.UnitRate, Value: cmp.Figure("iops"),
			Target: &cmp.Target{Metric: "total IOPS", Lo: 0.95, Source: targetSource}},
		{Name: "CPU per I/O", Unit: cmp.UnitDuration, Value: func(m cmp.Measurement) float64 { return float64(m.CPUPerOp()) },
			Target: &cmp.Target{Metric: "CPU per I/O", Hi: 1.0, Source: targetSource}},
		{Name: "read p99", Unit: cmp.UnitDuration, Value: cmp.Figure("read_p99_ns")},
	}
}

// columns are a round's table.
func columns() []cmp.Column {
	cols := []cmp.Column{
		{Head: "IOPS", Value: func(m cmp.Measurement) string { return cmp.FmtValue(cmp.UnitRate, cmp.Figure("iops")(m)) }},
		{Head: "read p99", Value: func(m cmp.Measurement) string { return cmp.FmtValue(cmp.UnitDuration, cmp.Figure("read_p99_ns")(m)) }},
	}
	cols = append(cols, cmp.TimeColumns()...)
	return append(cols, cmp.DurColumn("CPU/IO", cmp.Measurement.CPUPerOp))
}

// run does the whole comparison.
func run(ctx context.Context, o options, stdout, stderr io.Writer) (err error) {
	env, err := cmp.Setup(ctx, o.Common, name, stderr)
	if err != nil {
		return err
	}
	defer env.Release(&err)
	r := runner{fio: env.Fio, etcdbench: env.Etcdbench, dir: env.Dir, p: o.params}
	out := jsonFile{Started: time.Now().UTC(), Dir: env.Dir, Params: o.params, Fio: env.FioVersion, Etcdbench: env.Etcdbench}
	defer cmp.SaveJSON(o.Abs(o.JSON), &out, &out.Error, &err)

	steps, pairs := plan(o, r)
	fmt.Fprintf(stdout, "%s: %s vs etcdbench disk mixed, --bs %s --size %s --runtime %s --numjobs %d --iodepth %d --rwmixread %d, %d rounds, on %s\n",
		name, cmp.OrUnknown(env.FioVersion), o.BS, o.Size, o.Runtime, o.NumJobs, o.IODepth, o.RWMixRead, o.Rounds, env.Dir)
	fmt.Fprintf(stdout, "CPU: child rusage. CPU/IO: fio (CPU - the same job with --runtime=%s, i.e. its start-up) / I/Os; etcdbench its own CPU of the timed part / I/Os\n\n", baselineRuntime)

	c := cmp.Comparison{Steps: steps, Pairs: pairs, Metrics: metrics(), Columns: columns(), TargetSource: targetSource}
	return c.Run(ctx, o.Rounds, stdout, stderr, &out.Runs, &out.Summary)
}

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"time"

	"etcdbench/bench/internal/cmp"
)

// jsonFile is the layout of the --json file.
type jsonFile = cmp.JSONFile[params]

// Run names.
const (
	fioSnapshot  = "fio snapshot"
	etcdSnapshot = "etcdbench snapshot"
	fioRecovery  = "fio recovery"
	etcdRecovery = "etcdbench recovery"
)

// plan returns the runs of a round in their odd-round order, and the pairs
// that compare them.
func plan(r runner) ([]cmp.Step, []cmp.Pair) {
	step := func(run string, do func(context.Context) (cmp.Measurement, json.RawMessage, error)) cmp.Step {
		return cmp.Step{Run: run, Do: do}
	}
	steps := []cmp.Step{
		step(fioSnapshot, r.runFioSnapshot),
		step(etcdSnapshot, func(ctx context.Context) (cmp.Measurement, json.RawMessage, error) {
			return r.runEtcdbench(ctx, "snapshot", "durable_bandwidth")
		}),
		step(fioRecovery, r.runFioRecovery),
		step(etcdRecovery, func(ctx context.Context) (cmp.Measurement, json.RawMessage, error) {
			return r.runEtcdbench(ctx, "recovery", "sequential_read_bandwidth", "--random-runtime", "0")
		}),
	}
	pairs := []cmp.Pair{
		{Name: "snapshot (write+fsync)", Etcd: etcdSnapshot, Fio: fioSnapshot},
		{Name: "recovery (O_DIRECT read)", Etcd: etcdRecovery, Fio: fioRecovery},
	}
	return steps, pairs
}

const gib = 1 << 30

// cpuPerGiB is the CPU time the I/O itself cost, per GiB moved
// (cmp.Measurement.IOCPU): for fio the child's rusage less that of the
// prepare-only run (start-up), for etcdbench the CPU it measured with
// getrusage around its timed part. `disk recovery` writes its file inside
// the child, and that costs between 0.1 and 1 s of CPU from one run to the
// next, far more than reading 1 GiB, so its child rusage says nothing
// about the read.
func cpuPerGiB(m cmp.Measurement) float64 {
	cpu, _, bytes := m.IOCPU()
	if cpu <= 0 || bytes <= 0 {
		return math.NaN()
	}
	return float64(cpu) / (float64(bytes) / gib)
}

// targetSource says where the targets come from.
const targetSource = "etcdbench goal: the bandwidth fio gets from the same job (within 5 %) at no more CPU per byte"

// metrics are what every pair compares, with their targets.
func metrics() []cmp.Metric {
	return []cmp.Metric{
		{Name: "bandwidth", Unit: cmp.UnitBandwidth, Value: func(m cmp.Measurement) float64 { return m.Figures["bandwidth"] },
			Target: &cmp.Target{Metric: "bandwidth", Lo: 0.95, Source: targetSource}},
		{Name: "CPU per GiB", Unit: cmp.UnitDuration, Value: cpuPerGiB,
			Target: &cmp.Target{Metric: "CPU per GiB", Hi: 1.0, Source: targetSource}},
	}
}

// columns are a round's table.
func columns() []cmp.Column {
	cols := []cmp.Column{
		{Head: "bandwidth", Value: func(m cmp.Measurement) string { return cmp.FmtValue(cmp.UnitBandwidth, m.Figures["bandwidth"]) }},
	}
	cols = append(cols, cmp.TimeColumns()...)
	return append(cols, cmp.Column{Head: "CPU/GiB", Value: func(m cmp.Measurement) string { return cmp.FmtValue(cmp.UnitDuration, cpuPerGiB(m)) }})
}

// run does the whole comparison.
func run(ctx context.Context, o options, stdout, stderr io.Writer) (err error) {
	env, err := cmp.Setup(ctx, o.Common, name, stderr)
	if err != nil {
		return err
	}
	defer env.Release(&err)
	r := runner{fio: env.Fio, etcdbench: env.Etcdbench, dir: env.Dir, p: o.params, warm: o.Warm}
	out := jsonFile{Started: time.Now().UTC(), Dir: env.Dir, Params: o.params, Fio: env.FioVersion, Etcdbench: env.Etcdbench}
	defer cmp.SaveJSON(o.Abs(o.JSON), &out, &out.Error, &err)

	steps, pairs := plan(r)
	fmt.Fprintf(stdout, "%s: %s vs etcdbench disk snapshot and recovery, --bs %s --size %s, %d rounds, on %s\n",
		name, cmp.OrUnknown(env.FioVersion), o.BS, o.Size, o.Rounds, env.Dir)
	fmt.Fprintln(stdout, "bandwidth: fio bytes / job_runtime (incl. end_fsync), etcdbench durable_bandwidth / sequential_read_bandwidth;")
	fmt.Fprintf(stdout, "CPU/GiB: fio child rusage less a --size/--io_size %s run (start-up), etcdbench its own CPU of the timed part\n\n", o.BS)

	c := cmp.Comparison{Steps: steps, Pairs: pairs, Metrics: metrics(), Columns: columns(), TargetSource: targetSource}
	return c.Run(ctx, o.Rounds, stdout, stderr, &out.Runs, &out.Summary)
}

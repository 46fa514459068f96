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
	dur := func(f func(cmp.Measurement) time.Duration) func(cmp.Measurement) string {
		return func(m cmp.Measurement) string { return cmp.FmtDur(f(m)) }
	}
	return []cmp.Column{
		{Head: "bandwidth", Value: func(m cmp.Measurement) string { return cmp.FmtValue(cmp.UnitBandwidth, m.Figures["bandwidth"]) }},
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
		{Head: "CPU/GiB", Value: func(m cmp.Measurement) string { return cmp.FmtValue(cmp.UnitDuration, cpuPerGiB(m)) }},
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
	r := runner{fio: env.Fio, etcdbench: env.Etcdbench, dir: env.Dir, p: o.params, warm: o.Warm}
	out := jsonFile{Started: time.Now().UTC(), Dir: env.Dir, Params: o.params, Fio: env.FioVersion, Etcdbench: env.Etcdbench}
	defer cmp.SaveJSON(o.Abs(o.JSON), &out, &out.Error, &err)

	steps, pairs := plan(r)
	ms := metrics()
	fmt.Fprintf(stdout, "%s: %s vs etcdbench disk snapshot and recovery, --bs %s --size %s, %d rounds, on %s\n",
		name, cmp.OrUnknown(env.FioVersion), o.BS, o.Size, o.Rounds, env.Dir)
	fmt.Fprintln(stdout, "bandwidth: fio bytes / job_runtime (incl. end_fsync), etcdbench durable_bandwidth / sequential_read_bandwidth;")
	fmt.Fprintf(stdout, "CPU/GiB: fio child rusage less a --size/--io_size %s run (start-up), etcdbench its own CPU of the timed part\n\n", o.BS)

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

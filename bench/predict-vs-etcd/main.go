// Command predict-vs-etcd (bench/predict-vs-etcd/run) measures how well etcdbench's synthetic WAL tests
// predict what a real etcd's WAL sees on the same disk (issue 7): each
// round runs, on one directory and in alternating order,
//
//   - `etcdbench disk wal` (idle: one write + fdatasync at a time),
//   - `etcdbench disk wal-under-load` (16 group-committed clients, bbolt
//     commits meanwhile) and the same with one client,
//   - fio's etcd recipe (--rw=write --ioengine=sync --fdatasync=1
//     --bs=2300 --size=22m),
//   - an embedded etcd (a process of its own with its data in the same
//     directory) under `etcdbench etcd put` with 1 client and with 16,
//     its WAL fdatasyncs timed in the kernel by `etcdbench trace` (eBPF,
//     ns resolution, where etcd's own histogram starts at 1 ms), its
//     histogram's p99 recorded beside,
//
// and gives the median of the per-round ratios predicted p99 / real p99:
// wal-under-load with 1 client against etcd with 1 client, with 16 against
// 16 (targets: within 1.3x); the idle disk wal and fio's recipe, which
// have no bbolt commits beside the WAL as a real etcd does, against both
// for comparison.
//
// It is a measurement, not a test: the exit status is 0 whatever the
// ratios, 1 when a tool failed to run, 2 for bad flags or no fio, 130
// when interrupted. It needs root for the eBPF trace. See bench/README.md.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"strconv"
	"time"

	"etcdbench/bench/internal/cmp"
	"etcdbench/internal/fio"
	"etcdbench/internal/result"
)

const name = "predict-vs-etcd"

// params are the settings every round uses.
type params struct {
	EtcdDuration string `json:"etcd_duration"`
	ValSize      int    `json:"val_size"`
	FioSize      string `json:"fio_size"`
}

type options struct {
	cmp.Common
	params
}

func main() { cmp.Main(name, parseFlags, run) }

func parseFlags(args []string, stderr io.Writer) (options, error) {
	c, err := cmp.DefaultCommon()
	if err != nil {
		return options{}, err
	}
	o := options{Common: c, params: params{EtcdDuration: "10s", ValSize: 256, FioSize: "22m"}}
	err = cmp.ParseFlags(name, "How well `disk wal`, `disk wal-under-load` and fio's recipe predict a real etcd's WAL fdatasync p99 on the same disk.", &o.Common, args, stderr,
		func(fs *flag.FlagSet) {
			fs.StringVar(&o.EtcdDuration, "etcd-duration", o.EtcdDuration, "length of each etcd put load")
			fs.IntVar(&o.ValSize, "val-size", o.ValSize, "value bytes of the etcd puts")
			fs.StringVar(&o.FioSize, "fio-size", o.FioSize, "fio's --size")
		})
	if err != nil {
		return o, err
	}
	if d, err := time.ParseDuration(o.EtcdDuration); err != nil || d <= 0 {
		return o, cmp.UsageError{Err: fmt.Errorf("--etcd-duration %q: want a positive duration", o.EtcdDuration)}
	}
	return o, nil
}

// The runs of a round.
const (
	runWAL     = "disk wal"
	runLoaded  = "disk wal-under-load"
	runLoaded1 = "disk wal-under-load 1 client"
	runFio     = "fio recipe"
	runEtcd1   = "etcd 1 client"
	runEtcd16  = "etcd 16 clients"
	figP99     = "p99_ns"
	figHistP99 = "histogram_p99_ns"
	figSyncs   = "syncs"
	// figOwnP99 is the p99 without the waits for a CPU: for the traced
	// etcd its "wal sync without cpu wait"; for the disk tests and fio,
	// which time whole calls from user space on an otherwise idle
	// machine, their p99 itself.
	figOwnP99 = "p99_without_cpu_wait_ns"
	// figWaitShare is the traced etcd's share of WAL sync time spent
	// waiting for a CPU.
	figWaitShare = "cpu_wait_share"
)

func run(ctx context.Context, o options, stdout, stderr io.Writer) (err error) {
	env, err := cmp.Setup(ctx, o.Common, name, stderr)
	if err != nil {
		return err
	}
	defer env.Release(&err)
	srv, stop, err := cmp.ServeEtcd(ctx, o.ModuleDir, env.Dir, stderr)
	if err != nil {
		return err
	}
	defer stop(&err)
	r := runner{etcdbench: env.Etcdbench, fio: env.Fio, dir: env.Dir, srv: srv, p: o.params}
	steps := []cmp.Step{
		{Run: runWAL, Do: func(ctx context.Context) (cmp.Measurement, json.RawMessage, error) { return r.disk(ctx, "wal") }},
		{Run: runLoaded1, Do: func(ctx context.Context) (cmp.Measurement, json.RawMessage, error) {
			return r.disk(ctx, "wal-under-load", "--clients", "1")
		}},
		{Run: runEtcd1, Do: func(ctx context.Context) (cmp.Measurement, json.RawMessage, error) { return r.etcd(ctx, 1, 1) }},
		{Run: runFio, Do: r.fioRecipe},
		{Run: runEtcd16, Do: func(ctx context.Context) (cmp.Measurement, json.RawMessage, error) { return r.etcd(ctx, 4, 16) }},
		{Run: runLoaded, Do: func(ctx context.Context) (cmp.Measurement, json.RawMessage, error) {
			return r.disk(ctx, "wal-under-load")
		}},
	}
	within := &cmp.Target{Metric: "p99", Lo: 1 / 1.3, Hi: 1.3, Source: targetSource}
	c := cmp.Comparison{
		Steps: steps,
		Pairs: []cmp.Pair{
			{Name: "wal-under-load 1 client / etcd 1 client", Etcd: runLoaded1, Fio: runEtcd1},
			{Name: "wal-under-load / etcd 16 clients", Etcd: runLoaded, Fio: runEtcd16},
			{Name: "disk wal (idle) / etcd 1 client", Etcd: runWAL, Fio: runEtcd1, Informational: true},
			{Name: "fio recipe / etcd 1 client", Etcd: runFio, Fio: runEtcd1, Informational: true},
			{Name: "fio recipe / etcd 16 clients", Etcd: runFio, Fio: runEtcd16, Informational: true},
		},
		Metrics: []cmp.Metric{
			{Name: "p99", Unit: cmp.UnitDuration, Value: cmp.Figure(figP99), Target: within},
			{Name: "p99 without cpu wait", Unit: cmp.UnitDuration, Value: cmp.Figure(figOwnP99), Target: within},
		},
		Columns: []cmp.Column{
			{Head: "fdatasync p99", Value: func(m cmp.Measurement) string { return cmp.FmtValue(cmp.UnitDuration, cmp.Figure(figP99)(m)) }},
			{Head: "etcd histogram p99", Value: func(m cmp.Measurement) string { return cmp.FmtValue(cmp.UnitDuration, cmp.Figure(figHistP99)(m)) }},
			{Head: "without cpu wait", Value: func(m cmp.Measurement) string { return cmp.FmtValue(cmp.UnitDuration, cmp.Figure(figOwnP99)(m)) }},
			{Head: "cpu wait share", Value: func(m cmp.Measurement) string { return cmp.FmtRatio(cmp.Figure(figWaitShare)(m)) }},
			{Head: "syncs", Value: func(m cmp.Measurement) string { return cmp.FmtValue(cmp.UnitCount, cmp.Figure(figSyncs)(m)) }},
		},
		TargetSource: targetSource,
		Labels:       cmp.Labels{Subject: "predicted", Base: "real"},
	}
	out := cmp.JSONFile[params]{Started: time.Now().UTC(), Dir: env.Dir, Params: o.params, Fio: env.Fio + " " + env.FioVersion, Etcdbench: env.Etcdbench}
	defer cmp.SaveJSON(o.Abs(o.JSON), &out, &out.Error, &err)
	fmt.Fprintf(stdout, "%s: predicted WAL fdatasync p99 (disk tests, fio) / the real etcd's (pid %d, data in %s, traced by eBPF) on %s; %d rounds\n\n",
		name, srv.PID(), env.Dir, env.Dir, o.Rounds)
	return c.Run(ctx, o.Rounds, stdout, stderr, &out.Runs, &out.Summary)
}

const targetSource = "issue 7: the disk test's p99 within 1.3x of the real etcd's (0.77..1.30); the idle disk wal and fio's recipe are shown for comparison"

// runner runs the steps of a round.
type runner struct {
	etcdbench, fio, dir string
	srv                 *cmp.EtcdServer
	p                   params
}

// disk runs `etcdbench disk <workload> [extra...]` and reads its
// fdatasync p99.
func (r runner) disk(ctx context.Context, workload string, extra ...string) (cmp.Measurement, json.RawMessage, error) {
	args := append([]string{"disk", workload, "--dir", r.dir, "-o", "json", "--no-progress"}, extra...)
	ch, err := cmp.RunChild(ctx, []int{1}, r.etcdbench, args...)
	if err != nil {
		return cmp.Measurement{}, nil, err
	}
	w, err := cmp.EtcdbenchWorkload(ch.Stdout, workload)
	if err != nil {
		return cmp.Measurement{}, nil, err
	}
	m := cmp.Measurement{Tool: cmp.ToolEtcdbench, Ops: w.Ops, Runtime: time.Duration(w.DurationNs), Figures: figures(map[string]float64{
		figP99: p99(w, "fdatasync"), figOwnP99: p99(w, "fdatasync"), figSyncs: float64(w.Ops),
	})}
	m.FromChild(ch)
	return m, cmp.RawJSON(ch.Stdout), nil
}

// fioRecipe runs fio's etcd recipe in a fresh subdirectory.
func (r runner) fioRecipe(ctx context.Context) (m cmp.Measurement, raw json.RawMessage, err error) {
	sub, done, err := cmp.TempSub(r.dir, "predict-fio-")
	if err != nil {
		return m, nil, err
	}
	defer done(&err)
	ch, err := cmp.RunChild(ctx, nil, r.fio, "--name=predict", "--directory="+sub, "--rw=write", "--ioengine=sync",
		"--fdatasync=1", "--bs=2300", "--size="+r.p.FioSize, "--output-format=json")
	if err != nil {
		return m, nil, err
	}
	out, err := fio.Parse(ch.Stdout)
	if err != nil {
		return m, nil, err
	}
	gs, err := fio.Groups(out)
	if err != nil || len(gs) == 0 || gs[0].Hist == nil {
		return m, nil, fmt.Errorf("fio's output has no sync latencies: %v", err)
	}
	g := gs[0]
	m = cmp.Measurement{Tool: cmp.ToolFio, Ops: g.Syncs, Runtime: g.Elapsed, Figures: figures(map[string]float64{
		figP99: float64(g.Hist.ValueAtPercentile(99)), figOwnP99: float64(g.Hist.ValueAtPercentile(99)), figSyncs: float64(g.Syncs),
	})}
	m.FromChild(ch)
	return m, cmp.RawJSON(ch.Stdout), nil
}

// etcd loads the etcd with puts while `etcdbench trace` watches its
// fdatasyncs, and reads the traced WAL sync p99 and etcd's histogram p99.
func (r runner) etcd(ctx context.Context, conns, clients int) (cmp.Measurement, json.RawMessage, error) {
	detach, _, err := cmp.Attach(ctx, 2*time.Second, r.etcdbench, "trace", "--pid", strconv.Itoa(r.srv.PID()), "--duration", "1h", "-o", "json")
	if err != nil {
		return cmp.Measurement{}, nil, err
	}
	ch, lerr := cmp.RunChild(ctx, []int{1}, r.etcdbench, "etcd", "put", "--endpoints", r.srv.URL, "--yes",
		"--conns", strconv.Itoa(conns), "--clients", strconv.Itoa(clients), "--duration", r.p.EtcdDuration, "--total", "0",
		"--val-size", strconv.Itoa(r.p.ValSize), "--key-space-size", "100000", "-o", "json", "--no-progress")
	tout, derr := detach()
	if lerr != nil || derr != nil {
		return cmp.Measurement{}, nil, errors.Join(lerr, derr)
	}
	put, err := cmp.EtcdbenchWorkload(ch.Stdout, "etcd-put")
	if err != nil {
		return cmp.Measurement{}, nil, err
	}
	traced, err := result.Read(bytes.NewReader(tout))
	if err != nil || len(traced.Workloads) == 0 {
		return cmp.Measurement{}, nil, fmt.Errorf("etcdbench trace printed no result (%v)", err)
	}
	tw := traced.Workloads[0]
	hist := math.NaN()
	if f := put.Figure("member0_wal_fsync_p99"); f != nil {
		hist = f.Value * 1e9
	}
	share, serr := cmp.FigureOf(&tw, "wal_sync_cpu_wait_share")
	if serr != nil {
		share = math.NaN() // an older etcdbench: left out below
	}
	m := cmp.Measurement{Tool: "etcd", Ops: put.Ops, Runtime: time.Duration(put.DurationNs), Figures: figures(map[string]float64{
		figP99: p99(&tw, "wal sync"), figHistP99: hist, figSyncs: float64(tw.Ops),
		figOwnP99: p99(&tw, "wal sync without cpu wait"), figWaitShare: share,
	})}
	m.FromChild(ch)
	return m, cmp.RawJSON(tout), nil
}

// p99 is the named latency's p99 in ns, NaN when missing.
func p99(w *result.Workload, latency string) float64 {
	if l := w.Latency(latency); l != nil {
		if v, ok := l.At(99); ok {
			return float64(v)
		}
	}
	return math.NaN()
}

// figures leaves out the NaNs of figs (a run without that figure): JSON
// has no NaN.
func figures(figs map[string]float64) map[string]float64 {
	for k, v := range figs {
		if math.IsNaN(v) {
			delete(figs, k)
		}
	}
	return figs
}

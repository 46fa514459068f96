package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"etcdbench/bench/internal/cmp"
	"etcdbench/internal/etcdload"
)

// toolBenchmark names etcd's benchmark tool in tables and the JSON file.
const toolBenchmark = "benchmark"

// jsonFile is the layout of the --json file ("fio_version" holds
// benchmark's path and version).
type jsonFile = cmp.JSONFile[params]

// env is what the comparison runs with.
type env struct {
	dir, etcdbench, benchmark, benchVersion string
	url                                     string
	remove                                  []string
	server                                  *cmp.EtcdServer
}

// close stops the server and removes what setup made.
func (e *env) close() error {
	var errs []error
	if e.server != nil {
		errs = append(errs, e.server.Stop())
	}
	for i := len(e.remove) - 1; i >= 0; i-- {
		if err := os.RemoveAll(e.remove[i]); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// setup makes the test directory, builds etcdbench, benchmark and the
// etcd server helper and starts the server. On error it cleans up itself.
func setup(ctx context.Context, o options, stderr io.Writer) (e *env, err error) {
	e = &env{}
	defer func() {
		if err != nil {
			err = errors.Join(err, e.close())
			e = nil
		}
	}()
	if o.Dir == "" {
		if e.dir, err = os.MkdirTemp(o.Base, name+"-"); err != nil {
			return e, fmt.Errorf("creating a test directory in %s (or pass --dir): %w", o.Base, err)
		}
		e.remove = append(e.remove, e.dir)
		// A `git add -A` meanwhile must not take in etcd's data.
		if err := os.WriteFile(filepath.Join(e.dir, ".gitignore"), []byte("# bench/ test directory, removed at the end of the run\n*\n"), 0o644); err != nil {
			return e, err
		}
	} else {
		e.dir = o.Abs(o.Dir)
		if st, serr := os.Stat(e.dir); serr != nil || !st.IsDir() {
			return e, cmp.UsageError{Err: fmt.Errorf("--dir %s is not an existing directory", e.dir)}
		}
	}
	bin, err := os.MkdirTemp("", name+"-bin-")
	if err != nil {
		return e, err
	}
	e.remove = append(e.remove, bin)
	if o.Etcdbench != "" {
		e.etcdbench = o.Abs(o.Etcdbench)
	} else {
		fmt.Fprintln(stderr, "building ./cmd/etcdbench ...")
		if e.etcdbench, err = cmp.BuildEtcdbench(ctx, o.ModuleDir, bin); err != nil {
			return e, err
		}
	}
	if o.Benchmark != "" {
		e.benchmark, e.benchVersion = o.Abs(o.Benchmark), "given by --benchmark"
	} else if e.benchmark, e.benchVersion, err = cmp.BuildBenchmark(ctx, o.BenchmarkVersions, bin, stderr); err != nil {
		return e, err
	}
	helper, err := cmp.BuildEtcdServer(ctx, o.ModuleDir, bin)
	if err != nil {
		return e, err
	}
	fmt.Fprintln(stderr, "starting etcd ...")
	if e.server, err = cmp.StartEtcdServer(ctx, helper, e.dir); err != nil {
		return e, err
	}
	e.url = e.server.URL
	return e, nil
}

// runner runs one tool at one configuration.
type runner struct {
	e *env
	p params
}

func (r runner) common(c config) []string {
	return []string{"--conns", strconv.Itoa(c.Conns), "--clients", strconv.Itoa(c.Clients)}
}

// etcdbenchKeyBytes is the length of etcdbench's keys: its
// /etcdbench/<run-id>/ prefix and --key-size.
func etcdbenchKeyBytes(keySize int) int {
	return len(etcdload.PrefixRoot) + len(etcdload.NewRunID()) + 1 + keySize
}

// benchKeySize is the key length benchmark gets.
func (r runner) benchKeySize() int {
	if r.p.MatchKeyBytes {
		return etcdbenchKeyBytes(r.p.KeySize)
	}
	return r.p.KeySize
}

// runBenchmark runs `benchmark put` or `benchmark range` (with --precise:
// without it, the latencies are printed to 0.1 ms). The key benchmark
// ranges over is written before and deleted after the run.
func (r runner) runBenchmark(ctx context.Context, op string, c config) (cmp.Measurement, json.RawMessage, error) {
	args := append([]string{"--endpoints", r.e.url, "--precise"}, r.common(c)...)
	total := []string{"--total", strconv.FormatInt(c.Total, 10)}
	if op == "put" {
		args = append(append(append(args, "put"), total...), "--key-size", strconv.Itoa(r.benchKeySize()), "--val-size", strconv.Itoa(r.p.ValSize))
	} else {
		key := rangeKey(r.benchKeySize())
		done, err := r.e.putKey(ctx, key, r.p.ValSize)
		if err != nil {
			return cmp.Measurement{}, nil, err
		}
		defer done()
		args = append(append(args, "range", key), total...)
	}
	ch, err := cmp.RunChild(ctx, nil, r.e.benchmark, args...)
	if err != nil {
		return cmp.Measurement{}, nil, err
	}
	rep, err := cmp.ParseBenchmark(ch.Stdout)
	if err != nil {
		return cmp.Measurement{}, nil, err
	}
	raw, _ := json.Marshal(string(ch.Stdout))
	return measurement(toolBenchmark, rep, ch), raw, nil
}

// runEtcdbench runs `etcdbench etcd put` or `etcd range` against the same
// etcd (range writes its one key first, outside its timed part).
func (r runner) runEtcdbench(ctx context.Context, op string, c config) (cmp.Measurement, json.RawMessage, error) {
	args := append([]string{"etcd", op, "--endpoints", r.e.url, "--yes"}, r.common(c)...)
	args = append(args, "--total", strconv.FormatInt(c.Total, 10), "--key-size", strconv.Itoa(r.p.KeySize), "--val-size", strconv.Itoa(r.p.ValSize))
	args = append(args, "-o", "json", "--no-progress")
	// Exit 1 is a verdict FAIL (e.g. etcd's latency limits), a complete report.
	ch, err := cmp.RunChild(ctx, []int{1}, r.e.etcdbench, args...)
	if err != nil {
		return cmp.Measurement{}, nil, err
	}
	rep, err := parseEtcdbench(ch.Stdout, op)
	if err != nil {
		return cmp.Measurement{}, nil, err
	}
	return measurement(cmp.ToolEtcdbench, rep, ch), cmp.RawJSON(ch.Stdout), nil
}

func measurement(tool string, rep report, ch cmp.Child) cmp.Measurement {
	m := cmp.Measurement{Tool: tool, Ops: rep.Requests, Runtime: rep.Total, Figures: map[string]float64{
		"ops_per_sec": rep.OpsPerSec,
		"p50_ns":      float64(rep.Percentiles[50]),
		"p99_ns":      float64(rep.Percentiles[99]),
		"errors":      float64(rep.Errors),
	}}
	m.FromChild(ch)
	return m
}

func runName(tool, op string, c config) string { return tool + " " + op + " " + c.String() }

// plan returns the runs of a round in their odd-round order (even rounds
// reverse it) and the pairs compared.
func plan(r runner) ([]cmp.Step, []cmp.Pair) {
	var steps []cmp.Step
	var pairs []cmp.Pair
	for _, op := range r.p.Ops {
		for _, c := range r.p.Configs {
			steps = append(steps,
				cmp.Step{Run: runName(toolBenchmark, op, c), Do: func(ctx context.Context) (cmp.Measurement, json.RawMessage, error) { return r.runBenchmark(ctx, op, c) }},
				cmp.Step{Run: runName(cmp.ToolEtcdbench, op, c), Do: func(ctx context.Context) (cmp.Measurement, json.RawMessage, error) { return r.runEtcdbench(ctx, op, c) }})
			pairs = append(pairs, cmp.Pair{Name: fmt.Sprintf("%s %s, %d requests", op, c, c.Total),
				Etcd: runName(cmp.ToolEtcdbench, op, c), Fio: runName(toolBenchmark, op, c)})
		}
	}
	return steps, pairs
}

// rangeKey is the key benchmark ranges over, n bytes long.
func rangeKey(n int) string {
	k := "/putvsbench-range-key"
	for len(k) < n {
		k += "k"
	}
	return k[:n]
}

const targetSource = "issue 4: throughput at least benchmark's, p99 within 10 %; p50 and CPU per request are informational"

func metrics() []cmp.Metric {
	return []cmp.Metric{
		{Name: "throughput", Unit: cmp.UnitRate, Value: cmp.Figure("ops_per_sec"),
			Target: &cmp.Target{Metric: "throughput", Lo: 1.0, Source: targetSource}},
		{Name: "p99", Unit: cmp.UnitDuration, Value: cmp.Figure("p99_ns"),
			Target: &cmp.Target{Metric: "p99", Lo: 0.9, Hi: 1.1, Source: targetSource}},
		{Name: "p50", Unit: cmp.UnitDuration, Value: cmp.Figure("p50_ns")},
		{Name: "CPU per request", Unit: cmp.UnitDuration, Value: func(m cmp.Measurement) float64 { return float64(m.CPUPerOp()) }},
	}
}

func columns() []cmp.Column {
	return []cmp.Column{
		{Head: "requests", Value: func(m cmp.Measurement) string { return strconv.FormatInt(m.Ops, 10) }},
		{Head: "errors", Value: func(m cmp.Measurement) string { return cmp.FmtValue(cmp.UnitCount, cmp.Figure("errors")(m)) }},
		{Head: "req/s", Value: func(m cmp.Measurement) string { return cmp.FmtValue(cmp.UnitRate, cmp.Figure("ops_per_sec")(m)) }},
		{Head: "p50", Value: func(m cmp.Measurement) string { return cmp.FmtValue(cmp.UnitDuration, cmp.Figure("p50_ns")(m)) }},
		{Head: "p99", Value: func(m cmp.Measurement) string { return cmp.FmtValue(cmp.UnitDuration, cmp.Figure("p99_ns")(m)) }},
		cmp.DurColumn("runtime", func(m cmp.Measurement) time.Duration { return m.Runtime }),
		cmp.DurColumn("wall", func(m cmp.Measurement) time.Duration { return m.Wall }),
		cmp.DurColumn("CPU", func(m cmp.Measurement) time.Duration { return m.CPU }),
		cmp.DurColumn("CPU/req", cmp.Measurement.CPUPerOp),
	}
}

// run does the whole comparison.
func run(ctx context.Context, o options, stdout, stderr io.Writer) (err error) {
	e, err := setup(ctx, o, stderr)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := e.close(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	load0, err := cmp.LoadAverage()
	if err != nil {
		return err
	}
	out := jsonFile{Started: time.Now().UTC(), Dir: e.dir, Params: o.params,
		Fio: "benchmark " + e.benchVersion + " (" + e.benchmark + ")", Etcdbench: e.etcdbench}
	defer cmp.SaveJSON(o.Abs(o.JSON), &out, &out.Error, &err)

	r := runner{e: e, p: o.params}
	steps, pairs := plan(r)
	ms := metrics()
	fmt.Fprintf(stdout, "%s: etcd benchmark %s vs etcdbench etcd, %s, --key-size %d --val-size %d, %d rounds, one embedded etcd (%s, data in %s)\n",
		name, e.benchVersion, strings.Join(o.Ops, " and "), o.KeySize, o.ValSize, o.Rounds, e.url, e.dir)
	keys := fmt.Sprintf("benchmark's keys are %d bytes, as long as etcdbench's", r.benchKeySize())
	if !o.MatchKeyBytes {
		keys = fmt.Sprintf("benchmark's keys are %d bytes, etcdbench's %d", o.KeySize, etcdbenchKeyBytes(o.KeySize))
	}
	fmt.Fprintf(stdout, "CPU: the client's child rusage (the server's is not counted). etcdbench's keys are /etcdbench/<run-id>/ + --key-size bytes; %s\n", keys)
	fmt.Fprintln(stdout)
	var rounds []cmp.Round
	for n := 1; n <= o.Rounds; n++ {
		rd, raws, err := cmp.RunRound(ctx, n, o.Rounds, steps, stderr)
		out.Runs = append(out.Runs, raws...)
		if err != nil {
			return fmt.Errorf("round %d: %w", n, err)
		}
		rounds = append(rounds, rd)
		if err := renderRound(stdout, rd, o.Rounds, pairs, ms); err != nil {
			return err
		}
	}
	out.Summary = cmp.SummarizePairs(rounds, pairs, ms)
	var table bytes.Buffer
	if err := renderSummary(io.MultiWriter(stdout, &table), len(rounds), out.Summary); err != nil {
		return err
	}
	if err := cmp.RenderFooter(stdout, out.Summary, targetSource); err != nil {
		return err
	}
	res := cmp.Result{Bench: name, Source: "measured: " + strings.Join(append([]string{"bench/" + name + "/run"}, o.Args...), " "),
		Machine: cmp.Machine(e.dir) + ", " + out.Fio, Rounds: len(rounds), Figures: cmp.RowFigures(out.Summary), Table: table.String()}
	return cmp.SaveResult(o.Abs(o.Results), res, load0, out.Started)
}

// renderRound prints one round: its runs in order, then each pair's
// ratios etcdbench/benchmark.
func renderRound(w io.Writer, r cmp.Round, total int, pairs []cmp.Pair, ms []cmp.Metric) error {
	fmt.Fprintf(w, "round %d/%d (in this order)\n", r.N, total)
	cols := columns()
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	heads := []string{"run"}
	for _, c := range cols {
		heads = append(heads, c.Head)
	}
	fmt.Fprintln(tw, strings.Join(heads, "\t")+"\t")
	for _, n := range r.Order {
		cells := []string{n}
		for _, c := range cols {
			cells = append(cells, c.Value(r.Runs[n]))
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t")+"\t")
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, p := range pairs {
		var parts []string
		for i, x := range cmp.Ratios(r, p, ms) {
			parts = append(parts, ms[i].Name+" "+cmp.FmtRatio(x))
		}
		fmt.Fprintf(w, "  etcdbench/benchmark, %s: %s\n", p.Name, strings.Join(parts, ", "))
	}
	_, err := fmt.Fprintln(w)
	return err
}

// renderSummary prints the medians over rounds with benchmark in the
// place cmp.RenderSummary gives fio.
func renderSummary(w io.Writer, rounds int, rows []cmp.Row) error {
	fmt.Fprintf(w, "MEDIANS over %d rounds (ratio: median of the per-round ratios etcdbench/benchmark; range: min..max of them)\n", rounds)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "conns/clients, total\tmetric\tbenchmark\tetcdbench\tratio\trange\ttarget\tmet")
	for _, r := range rows {
		band, met := "info", "-"
		if r.Target != nil {
			band, met = cmp.FmtBand(*r.Target), cmp.YesNo(r.Met)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s..%s\t%s\t%s\n", r.Pair, r.Metric, cmp.FmtValue(r.Unit, r.Fio), cmp.FmtValue(r.Unit, r.Etcd),
			cmp.FmtRatio(float64(r.Ratio)), cmp.FmtRatio(float64(r.RatioMin)), cmp.FmtRatio(float64(r.RatioMax)), band, met)
	}
	return tw.Flush()
}

// putKey writes key with an n-byte value and returns the function that
// deletes it again.
func (e *env) putKey(ctx context.Context, key string, n int) (done func(), err error) {
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{e.url}, DialTimeout: 5 * time.Second})
	if err != nil {
		return nil, fmt.Errorf("connecting to %s to write the key to range over: %w", e.url, err)
	}
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := cli.Put(pctx, key, strings.Repeat("v", n)); err != nil {
		cli.Close()
		return nil, fmt.Errorf("writing the key to range over: %w", err)
	}
	return func() {
		dctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, _ = cli.Delete(dctx, key)
		cli.Close()
	}, nil
}

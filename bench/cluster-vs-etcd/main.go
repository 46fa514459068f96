// Command cluster-vs-etcd (bench/cluster-vs-etcd/run) holds etcdbench's
// answer for a cluster whose members are R apart (`etcd capacity
// --members 3 --peer-rtt R` and `capacity --members 3 --peer-rtt R`) to a
// real one:
//
//   - truth: a three-member cluster of Debian's etcd 3.4 (/usr/bin/etcd,
//     each member its own process, on 127.0.0.1), every member's peer
//     URL a toxiproxy (Shopify's, built from its module: independent of
//     etcdbench's own peer links) with a latency toxic of half the round
//     trip each way, so that every message to a member waits R/2 and a
//     round trip R. etcd's own benchmark drives every member's endpoint
//     (--drive all, its clients spread over them as etcdbench's sweep's
//     are; --drive leader: the leader's alone) open-loop
//     (`benchmark put --rate R`, check perf's clients and connections at
//     each rate, 256-byte new keys, 1 KiB values) for --step a rate. A
//     rate passes when benchmark had no errors and achieved 90 % of it,
//     its slowest request took at most 0.5 s and the stddev was at most
//     0.1 s (check perf's rules), and every member's own WAL fsync p99 <
//     10 ms and backend commit p99 < 25 ms (its /metrics over the step).
//     The search is capacity-vs-etcd's (bench/internal/search): a ladder
//     from --start doubling, a bisection to 10 %, the vote at the limit.
//   - beside it, etcdbench's two answers, each in a fresh directory.
//
// Rounds alternate the order of the round trips and of the three
// measurements; each measurement starts a cluster of its own. Per round
// trip it reports the medians and ranges of each side's rate and request
// p99, their ratios to the truth's and whether the medians lie within
// 1.25x. A measurement that fails is a note in its round, and the run
// goes on.
//
// It is a measurement, not a test: exit 0 whatever the ratios, 1 when a
// tool failed to run (a measurement included), 2 for bad flags, 130 when
// interrupted.
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"etcdbench/bench/internal/cmp"
	"etcdbench/bench/internal/search"
)

const name = "cluster-vs-etcd"

// The measurements of a round (--sides).
const (
	sideTruth        = "truth"
	sideEtcdCapacity = "etcd-capacity"
	sideCapacity     = "capacity"
)

var sideNames = []string{sideTruth, sideEtcdCapacity, sideCapacity}

// params are the bench's settings, saved with the results.
type params struct {
	RTTs    []time.Duration `json:"rtts_ns"`
	Members int             `json:"members"`
	Sides   []string        `json:"sides"`
	Step    time.Duration   `json:"step_ns"`
	Start   float64         `json:"start_rate"`
	KeySize int             `json:"key_size"`
	ValSize int             `json:"val_size"`
	// SideStep is etcd capacity's --step ("": its own default).
	SideStep string        `json:"side_step,omitempty"`
	Limits   search.Limits `json:"limits"`
	Latency  latencyLimits `json:"latency_limits"`
	// Goal is the ratio side/truth the medians must lie within (and its
	// inverse).
	Goal float64 `json:"goal"`
	// Drive is where the truth's puts go: "all" the members' endpoints
	// (benchmark's clients spread over them, as etcdbench's sweep's and
	// check perf's over a cluster's endpoints do), or "leader".
	Drive string `json:"drive"`
}

type options struct {
	cmp.Common
	params
	Debian            string
	Benchmark         string
	BenchmarkVersions []string
}

func main() { cmp.Main(name, parseFlags, run) }

// defaultRTTs are the round trips measured: the same zone, a near zone, regions apart.
const defaultRTTs = "0,2ms,10ms,50ms,120ms"

func parseFlags(args []string, stderr io.Writer) (options, error) {
	c, err := cmp.DefaultCommon()
	if err != nil {
		return options{}, err
	}
	c.NoFio, c.Rounds, c.FewestRounds = true, 3, 1
	o := options{Common: c, Debian: "/usr/bin/etcd", params: params{Members: 3, Start: 150, KeySize: 256, ValSize: 1024,
		Limits: search.DefaultLimits, Latency: checkPerfLatency(), Goal: 1.25, Drive: "all"}}
	rtts, sides, step := defaultRTTs, strings.Join(sideNames, ","), "10s"
	versions := strings.Join(cmp.DefaultBenchmarkVersions, ",")
	err = cmp.ParseFlags(name, "Holds `etcdbench etcd capacity` and `etcdbench capacity` with --members 3 --peer-rtt R to a real etcd 3.4 cluster whose peer links go through toxiproxy, driven by etcd's benchmark.", &o.Common, args, stderr, func(fs *flag.FlagSet) {
		fs.StringVar(&rtts, "rtts", rtts, "round trips between the members, a list")
		fs.StringVar(&sides, "sides", sides, "measurements of each round, comma-separated: "+strings.Join(sideNames, ", "))
		fs.StringVar(&step, "step", step, "length of each fixed-rate step of the truth")
		fs.Float64Var(&o.Start, "start", o.Start, "the truth's first rate (puts/s); the ladder doubles it")
		fs.StringVar(&o.SideStep, "side-step", "", "etcd capacity's --step (default: its own)")
		fs.StringVar(&o.Drive, "drive", o.Drive, "where the truth's puts go: all (every member's endpoint, as etcdbench's sweep sends) or leader")
		fs.StringVar(&o.Debian, "debian-etcd", o.Debian, "Debian's etcd 3.4 binary")
		fs.StringVar(&o.Benchmark, "benchmark", "", "etcd's benchmark binary; default: build go.etcd.io/etcd/v3/tools/benchmark")
		fs.StringVar(&versions, "benchmark-versions", versions, "etcd versions to try, in order, when building benchmark")
	})
	if err != nil {
		return o, err
	}
	bad := func(format string, a ...any) (options, error) {
		return o, cmp.UsageError{Err: fmt.Errorf(format, a...)}
	}
	if o.RTTs, err = cmp.ParseDurations("rtts", rtts); err != nil {
		return o, err
	}
	if o.Drive != "all" && o.Drive != "leader" {
		return bad("--drive %q: want all or leader", o.Drive)
	}
	for _, s := range strings.Split(sides, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		if !slices.Contains(sideNames, s) {
			return bad("--sides: unknown measurement %q (want %s)", s, strings.Join(sideNames, ", "))
		}
		o.Sides = append(o.Sides, s)
	}
	if len(o.Sides) == 0 {
		return bad("--sides: name at least one of %s", strings.Join(sideNames, ", "))
	}
	if o.Step, err = time.ParseDuration(step); err != nil || o.Step < time.Second {
		return bad("--step %q: want a duration of at least 1s", step)
	}
	if o.SideStep != "" {
		if d, err := time.ParseDuration(o.SideStep); err != nil || d < time.Second {
			return bad("--side-step %q: want a duration of at least 1s", o.SideStep)
		}
	}
	if o.Start < 10 {
		return bad("--start %g: want at least 10 puts/s", o.Start)
	}
	for _, v := range strings.Split(versions, ",") {
		if v = strings.TrimSpace(v); v != "" {
			o.BenchmarkVersions = append(o.BenchmarkVersions, v)
		}
	}
	return o, nil
}

// resultsFile is the --json file: everything measured, rewritten after
// each measurement so that an interrupted run keeps what it finished.
type resultsFile struct {
	Bench        string           `json:"bench"`
	Started      time.Time        `json:"started"`
	Params       params           `json:"params"`
	Benchmark    string           `json:"benchmark"`
	Etcd         string           `json:"etcd"`
	Proxy        string           `json:"proxy"`
	Etcdbench    string           `json:"etcdbench"`
	Measurements []measurement    `json:"measurements"`
	Summary      []rttSummary     `json:"summary"`
	Error        string           `json:"error,omitempty"`
	Machine      string           `json:"machine"`
	Load         [2]cmp.JSONFloat `json:"load_average"`
}

func run(ctx context.Context, o options, stdout, stderr io.Writer) (err error) {
	if _, err := os.Stat(o.Abs(o.Debian)); slices.Contains(o.Sides, sideTruth) && err != nil {
		return cmp.UsageError{Err: fmt.Errorf("--debian-etcd %s: %w (apt-get install etcd-server)", o.Abs(o.Debian), err)}
	}
	loadStart, _ := cmp.LoadAverage()
	env, err := cmp.Setup(ctx, o.Common, name, stderr)
	if err != nil {
		return err
	}
	defer env.Release(&err)
	bin, err := os.MkdirTemp("", name+"-bin-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(bin)
	out := resultsFile{Bench: name, Started: time.Now().UTC(), Params: o.params, Etcd: o.Abs(o.Debian), Proxy: cmp.ToxiproxyPkg,
		Etcdbench: env.Etcdbench, Machine: cmp.Machine(env.Dir)}
	m := measurer{dir: env.Dir, etcdbench: env.Etcdbench, etcd: o.Abs(o.Debian), o: o, progress: stderr}
	if slices.Contains(o.Sides, sideTruth) {
		bench, version := o.Abs(o.Benchmark), "given by --benchmark"
		if o.Benchmark == "" {
			if bench, version, err = cmp.BuildBenchmark(ctx, o.BenchmarkVersions, bin, stderr); err != nil {
				return err
			}
		}
		out.Benchmark = bench + " " + version
		fmt.Fprintf(stderr, "building toxiproxy (%s) ...\n", cmp.ToxiproxyPkg)
		server, err := cmp.BuildToxiproxy(ctx, bin)
		if err != nil {
			return err
		}
		if m.proxy, err = cmp.StartToxiproxy(ctx, server); err != nil {
			return err
		}
		defer m.proxy.Stop()
		m.benchmark = bench
	}
	save := func() error {
		if o.JSON == "" {
			return nil
		}
		out.Summary = summarize(out.Measurements, o.RTTs, o.Goal)
		return cmp.WriteJSON(o.Abs(o.JSON), out)
	}
	fmt.Fprintf(stdout, "%s: %d members of %s, round trips %s, %d rounds, measurements %s\n", name, o.Members, out.Etcd, fmtRTTs(o.RTTs), o.Rounds, strings.Join(o.Sides, ", "))
	failed := 0
	for n := 1; n <= o.Rounds; n++ {
		for _, rtt := range cmp.Alternate(n, o.RTTs) {
			ms, err := m.round(ctx, n, rtt)
			out.Measurements = append(out.Measurements, ms)
			if err != nil {
				out.Error = err.Error()
				return errors.Join(err, save())
			}
			failed += len(ms.Notes)
			if err := save(); err != nil {
				return err
			}
		}
	}
	out.Summary = summarize(out.Measurements, o.RTTs, o.Goal)
	loadEnd, _ := cmp.LoadAverage()
	out.Load = [2]cmp.JSONFloat{cmp.JSONFloat(loadStart), cmp.JSONFloat(loadEnd)}
	var table bytes.Buffer
	printTable(io.MultiWriter(stdout, &table), out.Summary, o.Goal)
	if err := save(); err != nil {
		return err
	}
	if err := cmp.SaveResult(o.Abs(o.Results), cmp.Result{Bench: name, Source: "bench/" + name + "/run " + strings.Join(o.Args, " "),
		Machine: out.Machine, Rounds: o.Rounds, Figures: figures(out.Summary), Table: table.String()}, loadStart, out.Started); err != nil {
		return err
	}
	if failed > 0 {
		return fmt.Errorf("%d measurements failed (their notes are in the table and the --json file)", failed)
	}
	return nil
}

func fmtRTTs(ds []time.Duration) string {
	var s []string
	for _, d := range ds {
		s = append(s, d.String())
	}
	return strings.Join(s, ", ")
}

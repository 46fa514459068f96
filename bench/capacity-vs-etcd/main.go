// Command capacity-vs-etcd (bench/capacity-vs-etcd/run) measures how well
// `etcdbench capacity` predicts the highest put rate a real etcd sustains
// within its limits, on every storage of the zoo (internal/testutil/zoo),
// with the truth taken from outside etcdbench (issue 22):
//
//   - truth: a real etcd as its own process, run in the storage (inside
//     its cgroup for the block-throttle storages): Debian's etcd 3.4
//     (/usr/bin/etcd) and the embedded etcd of go.mod (the
//     put-vs-etcd-benchmark helper), each driven at fixed rates by etcd's
//     own benchmark tool (`benchmark put --rate R`: 256-byte keys, 1 KiB
//     values, new keys; with --shape fixed, --clients clients on --conns
//     connections, 50 by default, the issue's; with --shape check-perf,
//     etcdctl check perf's clients and connections at each rate, 50 to
//     1,000, as `capacity`'s etcd side sends) for --step per rate. A
//     rate passes when etcd's own WAL fsync p99 < 10 ms and backend
//     commit p99 < 25 ms (its /metrics' histogram deltas over the step),
//     benchmark had no errors and achieved 90 % of the rate. A ladder
//     (x2) and a bisection find the highest passing rate to 10 %.
//   - beside it, `etcdbench etcd capacity` (the sweep of a real etcd);
//   - the prediction: `etcdbench capacity`'s estimate, run in the same
//     storage (inside the cgroup).
//
// With --paired, each round starts one member per real etcd and runs on
// it, in alternating order, the truth's search and etcdbench's etcd side
// (`etcdbench etcd capacity --endpoints`), and reports their ratio on the
// same member in the same minutes: the median over the rounds per storage
// and real etcd, goal within 1.25x (paired.go).
//
// Each measurement gets the storage set up afresh (a burst bucket's
// credits full, a competing writer started). For each storage it prints
// the rounds' figures and the ratio estimate / real etcd's highest
// passing rate, and the device's writes, bytes and flushes per put at
// that rate (/proc/diskstats: the whole device, other processes
// included). --json writes every step of every run. It is a measurement,
// not a test: exit 0 whatever the ratios, 1 when a tool failed to run, 2
// for bad flags, 130 when interrupted. Needs root (cgroups, FUSE).
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"etcdbench/bench/internal/cmp"
	"etcdbench/bench/internal/search"
	"etcdbench/internal/testutil/zoo"
)

const name = "capacity-vs-etcd"

// params are the bench's settings, saved with the results.
type params struct {
	Storages string  `json:"storages"`
	Etcds    string  `json:"etcds"`
	Sweeps   string  `json:"sweeps"`
	Step     string  `json:"step"`
	Start    float64 `json:"start_rate"`
	Conns    int     `json:"conns"`
	Clients  int     `json:"clients"`
	// Shape is how the truth's clients are set: "fixed" (Conns and
	// Clients; absent in older results) or "check-perf" (check perf's at
	// each rate, etcdload.CheckPresetAt).
	Shape      string        `json:"shape,omitempty"`
	KeySize    int           `json:"key_size"`
	ValSize    int           `json:"val_size"`
	EntryBytes int           `json:"capacity_entry_bytes"`
	EtcdStep   string        `json:"etcd_capacity_step"`
	Limits     search.Limits `json:"limits"`
	// RAMDisk is the size of the RAM disk the storages are made on (0:
	// --dir's disk).
	RAMDisk int64 `json:"ramdisk_bytes,omitempty"`
	// FirstRound numbers this run's first round, so that runs made one
	// after another alternate the order as the rounds of one run do.
	FirstRound int `json:"first_round"`
	// Seed seeds the latency storages' delays (zoo.Seeded) in round 1;
	// round n's are seeded with Seed+n-1 (round.Seed), so that the rounds
	// sample a latency storage's draws instead of repeating one. Older
	// results (no seed) had 1 in every round.
	Seed uint64 `json:"seed,omitempty"`
	// Paired runs, in each round and for each real etcd, the truth's
	// search and `etcd capacity --endpoints` on one member (round.Paired),
	// with the etcd side's steps PairedStep long; absent in unpaired runs.
	Paired     bool   `json:"paired,omitempty"`
	PairedStep string `json:"paired_step,omitempty"`
}

type options struct {
	cmp.Common
	params
	Debian            string
	From              string
	Benchmark         string
	BenchmarkVersions []string
	step              time.Duration
	// pairedStep is --paired-step, kept in params only when --paired.
	pairedStep string
}

func main() { cmp.Main(name, parseFlags, run) }

// The truth's shapes (--shape).
const (
	shapeFixed     = "fixed"
	shapeCheckPerf = "check-perf"
)

// kindNames are the real etcds --etcds chooses from, sweepNames
// etcdbench's sweeps --sweeps does.
var (
	kindNames  = []string{"etcd-3.4", "embedded"}
	sweepNames = []string{"capacity", "etcd-capacity"}
)

// defaultPairedStep is the etcd side's step on a paired member: the
// step `capacity` gives its etcd side on its embedded member (held up to
// 10 s where its few observations decide).
const defaultPairedStep = 3 * time.Second

func parseFlags(args []string, stderr io.Writer) (options, error) {
	c, err := cmp.DefaultCommon()
	if err != nil {
		return options{}, err
	}
	c.NoFio, c.Rounds = true, 1
	o := options{Common: c, Debian: "/usr/bin/etcd", params: params{
		Storages: "all", Etcds: strings.Join(kindNames, ","), Sweeps: strings.Join(sweepNames, ","), Step: "10s", Start: 100,
		Conns: 50, Clients: 50, Shape: shapeFixed, KeySize: 256, ValSize: 1024, EntryBytes: 1400, EtcdStep: "3s", Limits: search.DefaultLimits, FirstRound: 1, Seed: 1}}
	versions := strings.Join(cmp.DefaultBenchmarkVersions, ",")
	var names []string
	for _, s := range zoo.Default() {
		names = append(names, s.Name)
	}
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	o.Common.Register(fs)
	fs.StringVar(&o.Storages, "storages", o.Storages, "storages to measure, comma-separated, or all: "+strings.Join(names, ", "))
	fs.StringVar(&o.Etcds, "etcds", o.Etcds, "real etcds to bisect, comma-separated (\"\": none, the sweeps alone): "+strings.Join(kindNames, ", "))
	fs.StringVar(&o.Sweeps, "sweeps", o.Sweeps, "etcdbench's sweeps to run beside them, comma-separated (\"\": none): "+strings.Join(sweepNames, ", "))
	fs.StringVar(&o.Debian, "debian-etcd", o.Debian, "Debian's etcd 3.4 binary")
	fs.StringVar(&o.Benchmark, "benchmark", "", "etcd's benchmark binary; default: build go.etcd.io/etcd/v3/tools/benchmark")
	fs.StringVar(&versions, "benchmark-versions", versions, "etcd versions to try, in order, when building benchmark")
	fs.Int64Var(&o.RAMDisk, "ramdisk", 0, "make the storages on an ext4 RAM disk of this many bytes (a loop device over /dev/shm; e.g. 3221225472) instead of --dir's disk: other processes on a shared disk then neither slow it nor show in its diskstats")
	fs.IntVar(&o.FirstRound, "first-round", o.FirstRound, "number of this run's first round (the order of a round's runs alternates with its number): continue an earlier run")
	fs.Uint64Var(&o.Seed, "seed", o.Seed, "seed of the latency storages' delays (latency-tail, network-block) in round 1; round n's is this plus n-1, so that rounds sample the draws: a truth that moves with the seed is the draws' luck")
	fs.StringVar(&o.Step, "step", o.Step, "length of each fixed-rate step of the real etcds")
	fs.Float64Var(&o.Start, "start", o.Start, "the real etcds' first rate (puts/s); the ladder doubles it")
	fs.StringVar(&o.Shape, "shape", o.Shape, "the truth's clients: fixed (--clients on --conns) or check-perf (etcdctl check perf's clients and connections at each rate: 50 up to 150 puts/s, 200 to 1,000, 500 to 8,000, then 1,000; what capacity's etcd side sends)")
	fs.IntVar(&o.Conns, "conns", o.Conns, "benchmark's gRPC connections (--shape fixed)")
	fs.IntVar(&o.Clients, "clients", o.Clients, "benchmark's clients (--shape fixed)")
	fs.IntVar(&o.EntryBytes, "entry-bytes", o.EntryBytes, "etcdbench capacity's entry size")
	fs.StringVar(&o.EtcdStep, "etcd-step", o.EtcdStep, "length of each `etcd capacity` step")
	fs.BoolVar(&o.Paired, "paired", false, "in each round, for each real etcd, start one member and run on it, in alternating order, the truth's search and etcdbench's etcd side (`etcdbench etcd capacity --endpoints`): their ratio on the same member in the same minutes; --sweeps then takes only capacity (default: capacity)")
	o.pairedStep = defaultPairedStep.String()
	fs.StringVar(&o.pairedStep, "paired-step", o.pairedStep, "length of each step of the etcd side on the paired member (--paired)")
	fs.StringVar(&o.From, "from", "", "measure nothing: print the table of earlier --json files (comma-separated; their rounds merged by storage) and, with --results, save it")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: bench/%s/run [flags]\n\n%s\n\nFlags:\n", name,
			"How well `etcdbench capacity` predicts the put rate a real etcd (Debian's 3.4 and the embedded one, driven by etcd's benchmark tool) sustains, on every storage of the zoo.")
		fs.PrintDefaults()
	}
	if err := cmp.Parse(fs, args); err != nil {
		return o, err
	}
	bad := func(format string, a ...any) (options, error) {
		return o, cmp.UsageError{Err: fmt.Errorf(format, a...)}
	}
	if o.Paired {
		if err := o.pairedFlags(flagSet(fs)); err != nil {
			return o, cmp.UsageError{Err: err}
		}
	}
	// One round is allowed: a full round takes over an hour.
	if o.Rounds < 1 || o.FirstRound < 1 {
		return bad("--rounds %d, --first-round %d: want at least 1", o.Rounds, o.FirstRound)
	}
	for _, w := range strings.Split(o.Sweeps, ",") {
		if w != "" && !contains(sweepNames, w) {
			return bad("--sweeps: unknown sweep %q (want %s)", w, strings.Join(sweepNames, ", "))
		}
	}
	if _, err := zoo.Lookup(zoo.Seeded(o.Seed), o.Storages); err != nil {
		return bad("--storages: %v", err)
	}
	for _, k := range strings.Split(o.Etcds, ",") {
		if k != "" && !contains(kindNames, k) {
			return bad("--etcds: unknown etcd %q (want %s)", k, strings.Join(kindNames, ", "))
		}
	}
	if o.step, err = time.ParseDuration(o.Step); err != nil || o.step < time.Second {
		return bad("--step %q: want a duration of at least 1s", o.Step)
	}
	if d, err := time.ParseDuration(o.EtcdStep); err != nil || d < time.Second {
		return bad("--etcd-step %q: want a duration of at least 1s", o.EtcdStep)
	}
	if o.RAMDisk < 0 || (o.RAMDisk > 0 && o.Dir != "") {
		return bad("--ramdisk %d: want a size in bytes, and no --dir beside it", o.RAMDisk)
	}
	if o.Shape != shapeFixed && o.Shape != shapeCheckPerf {
		return bad("--shape %q: want %s or %s", o.Shape, shapeFixed, shapeCheckPerf)
	}
	if o.Start < 10 || o.Conns < 1 || o.Clients < o.Conns || o.EntryBytes <= 0 {
		return bad("--start (at least 10), --conns, --clients (at least --conns) and --entry-bytes must be positive")
	}
	for _, v := range strings.Split(versions, ",") {
		if v = strings.TrimSpace(v); v != "" {
			o.BenchmarkVersions = append(o.BenchmarkVersions, v)
		}
	}
	return o, nil
}

// flagSet is the names of the flags given on the command line.
func flagSet(fs *flag.FlagSet) map[string]bool {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	return set
}

// pairedFlags checks and completes --paired's settings: a real etcd to
// pair with, a step of at least a second, and --sweeps without
// etcd-capacity (the paired etcd side is that sweep, on the real member);
// without --sweeps given, capacity alone.
func (o *options) pairedFlags(given map[string]bool) error {
	if strings.Trim(o.Etcds, ",") == "" {
		return errors.New("--paired needs a real etcd to pair with: --etcds etcd-3.4, embedded or both")
	}
	if d, err := time.ParseDuration(o.pairedStep); err != nil || d < time.Second {
		return fmt.Errorf("--paired-step %q: want a duration of at least 1s", o.pairedStep)
	}
	if !given["sweeps"] {
		o.Sweeps = "capacity"
	} else if contains(strings.Split(o.Sweeps, ","), "etcd-capacity") {
		return errors.New("--paired runs etcd capacity on each real etcd's own member: --sweeps takes only capacity (or \"\")")
	}
	o.PairedStep = o.pairedStep
	return nil
}

func contains(s []string, x string) bool {
	for _, y := range s {
		if y == x {
			return true
		}
	}
	return false
}

// resultsFile is the --json file: everything measured, rewritten after
// each storage so that an interrupted run keeps what it finished.
type resultsFile struct {
	Started   time.Time `json:"started"`
	Params    params    `json:"params"`
	Benchmark string    `json:"benchmark"`
	Etcdbench string    `json:"etcdbench"`
	Rows      []row     `json:"rows"`
	// Paired is the summary of --paired's rounds, per storage and real
	// etcd; absent in unpaired runs.
	Paired []pairedSummary `json:"paired_summary,omitempty"`
	Error  string          `json:"error,omitempty"`
}

func run(ctx context.Context, o options, stdout, stderr io.Writer) (err error) {
	if o.From != "" {
		return merged(o, stdout)
	}
	stores, err := zoo.Lookup(zoo.Seeded(o.Seed), o.Storages)
	if err != nil {
		return cmp.UsageError{Err: err}
	}
	if o.RAMDisk > 0 {
		rd, err := zoo.NewRAMDisk(ctx, o.RAMDisk)
		if err != nil {
			return err
		}
		defer func() { err = errors.Join(err, rd.Close()) }()
		o.Dir = rd.Dir
		fmt.Fprintf(stderr, "RAM disk %s on %s\n", rd.Loop, rd.Dir)
	}
	env, err := cmp.Setup(ctx, o.Common, name, stderr)
	if err != nil {
		return err
	}
	defer env.Release(&err)
	dev, err := zoo.DeviceOf(env.Dir)
	if err != nil {
		return err
	}
	bin, err := os.MkdirTemp("", name+"-bin-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(bin)
	bench, version := o.Abs(o.Benchmark), "given by --benchmark"
	if o.Benchmark == "" {
		if bench, version, err = cmp.BuildBenchmark(ctx, o.BenchmarkVersions, bin, stderr); err != nil {
			return err
		}
	}
	kinds, err := etcdKinds(ctx, o, bin)
	if err != nil {
		return err
	}
	out := resultsFile{Started: time.Now().UTC(), Params: o.params, Benchmark: bench + " " + version, Etcdbench: env.Etcdbench}
	save := func() error {
		if o.JSON == "" {
			return nil
		}
		out.Paired = summarizePaired(out.Rows)
		return cmp.WriteJSON(o.Abs(o.JSON), out)
	}
	defer func() {
		if err != nil {
			out.Error = err.Error()
			err = errors.Join(err, save())
		}
	}()
	s := stepper{benchmark: bench, conns: o.Conns, clients: o.Clients, checkPerf: o.Shape == shapeCheckPerf, keySize: o.KeySize, valSize: o.ValSize, dur: o.step, lim: o.Limits}
	srch := search.Search{Start: o.Start, Factor: 2, Resolution: 1.1, Min: 10, Max: 100_000, Confirm: o.Paired, Vote: true}
	fmt.Fprintf(stdout, "%s: %d storages, %d rounds, real etcds %s (device %s under %s)\n", name, len(stores), o.Rounds, o.Etcds, dev, env.Dir)
	if o.Paired {
		fmt.Fprintf(stdout, "paired: each round, one member per real etcd runs the truth's search and etcd capacity --endpoints (steps of %s), in alternating order\n", o.PairedStep)
	}
	m := measurer{env: env, dev: dev, o: o, kinds: kinds, step: s, search: srch, progress: stderr}
	for _, st := range stores {
		r, err := m.storage(ctx, st)
		out.Rows = append(out.Rows, r)
		if err != nil {
			return err
		}
		if err := save(); err != nil {
			return err
		}
	}
	var table bytes.Buffer
	if err := printTable(io.MultiWriter(stdout, &table), out.Rows); err != nil {
		return err
	}
	return saveResult(o, out.Rows, table.String(), out.Started)
}

// etcdKinds are the real etcds --etcds names, ready to start.
func etcdKinds(ctx context.Context, o options, bin string) ([]etcdKind, error) {
	var ks []etcdKind
	for _, n := range strings.Split(o.Etcds, ",") {
		switch n {
		case "": // --etcds "": the sweeps alone
		case "etcd-3.4":
			path := o.Abs(o.Debian)
			if _, err := os.Stat(path); err != nil {
				return nil, cmp.UsageError{Err: fmt.Errorf("--debian-etcd %s: %w (apt-get install etcd-server, or --etcds embedded)", path, err)}
			}
			ks = append(ks, etcdKind{Name: n, start: func(ctx context.Context, p *zoo.Place) (server, error) {
				e, err := cmp.StartEtcdBinary(ctx, p.Wrap, p.Dir, path)
				if err != nil {
					return nil, err
				}
				return binary{e}, nil
			}})
		case "embedded":
			helper, err := cmp.BuildEtcdServer(ctx, o.ModuleDir, filepath.Join(bin))
			if err != nil {
				return nil, err
			}
			ks = append(ks, etcdKind{Name: n, start: func(ctx context.Context, p *zoo.Place) (server, error) {
				s, err := cmp.StartEtcdServerIn(ctx, p.Wrap, helper, p.Dir)
				if err != nil {
					return nil, err
				}
				return embedded{s}, nil
			}})
		}
	}
	return ks, nil
}

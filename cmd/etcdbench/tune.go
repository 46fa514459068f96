package main

import (
	"context"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"etcdbench/internal/etcdcluster"
	"etcdbench/internal/etcdload"
	"etcdbench/internal/result"
	"etcdbench/internal/run"
	"etcdbench/internal/scratch"
	"etcdbench/internal/tune"
)

// tuneFlags are the flags of `etcdbench tune`.
type tuneFlags struct {
	dir      dirFlag
	saveDir  string
	vary     []string
	rounds   int
	workload string
	out      outputFlags
	prog     progressFlags
	load     loadFlags
}

func (f *tuneFlags) register(fs *pflag.FlagSet) {
	var names, loads []string
	for _, s := range tune.Settings {
		names = append(names, s.Name)
	}
	for _, k := range tune.Kinds() {
		loads = append(loads, string(k.Op))
	}
	f.dir.register(fs, "", "directory on the disk to test: each run's embedded etcd gets a fresh scratch directory inside it (or vary it: --vary dir=A,B)")
	fs.StringArrayVar(&f.vary, "vary", nil, "a setting and its values, NAME=v1,v2,...; repeat for more settings, every combination runs. NAME: "+strings.Join(names, ", "))
	fs.IntVar(&f.rounds, "rounds", 3, "runs of each combination, alternating the order (3 or more to tell differences from noise)")
	fs.StringVar(&f.saveDir, "save-dir", "", "also save every run's result as JSON in this existing directory (for etcdbench report/compare)")
	fs.StringVar(&f.workload, "workload", "put", "the load of every run: "+strings.Join(loads, ", ")+" (as etcdbench etcd <workload>)")
	// Every run of a tune is a workload of the same name: one exposition
	// cannot hold them (it would repeat series), and one file per run is
	// what --save-dir and report are for.
	f.out.registerFormats(fs, []string{"text", "json", "html"}, "tune has no Prometheus output (its runs would repeat one series): save the runs with --save-dir DIR and set them side by side with 'etcdbench compare DIR/tune-*.json'")
	f.prog.register(fs)
	f.load.register(fs, tune.Load(etcdload.OpPut), tune.Kinds(), "longest run; with --total, whichever comes first")
	// The defaults shown are put's; mixed reads keys it writes first.
	fs.Lookup("key-space-size").Usage += " (the workload's when not given: mixed 1000)"
}

// tuneSpec is one validated tune.
type tuneSpec struct {
	plan     tune.Plan
	output   string
	saveDir  string
	args     []string
	progress io.Writer // stderr when it is a terminal, or nil
}

// resolve checks the flags, every --vary and every combination before
// anything runs.
func (f *tuneFlags) resolve(cmd *cobra.Command) (tuneSpec, error) {
	s := tuneSpec{output: f.out.output, saveDir: f.saveDir, args: redactArgs(commandLine(cmd))}
	if err := f.out.check(); err != nil {
		return s, err
	}
	op := etcdload.Op(f.workload)
	if !slices.ContainsFunc(tune.Kinds(), func(k etcdload.Kind) bool { return k.Op == op }) {
		return s, run.Usagef("--workload %q: want put, range, txn or mixed", f.workload)
	}
	var vs []tune.Vary
	varied := map[string]bool{}
	for _, a := range f.vary {
		v, err := tune.ParseVary(a)
		if err != nil {
			return s, run.Usage(err)
		}
		varied[v.Setting.Name] = true
		vs = append(vs, v)
	}
	if len(vs) == 0 {
		return s, run.Usagef("nothing to vary: give --vary NAME=v1,v2,... (e.g. --vary snapshot-count=10000,100000)")
	}
	for _, name := range []string{"clients", "conns", "val-size", "dir"} {
		if varied[name] && cmd.Flags().Changed(name) {
			return s, run.Usagef("--%s and --vary %s are alternatives: give the values in --vary", name, name)
		}
	}
	if !varied["dir"] {
		if err := f.dir.require(dirWhat, "--vary dir=A,B"); err != nil {
			return s, err
		}
	}
	base := tune.Config{Embedded: etcdcluster.Options{Members: 1}}
	if f.dir.path != "" {
		abs, err := scratch.Check(f.dir.path)
		if err != nil {
			return s, err
		}
		base.Dir = abs
	}
	// The workload's defaults, tune's shorter defaults, and the flags
	// given.
	l := tune.Load(op)
	if err := f.load.apply(cmd, &l); err != nil {
		return s, err
	}
	base.Load = l
	p, err := tune.NewPlan(base, vs, f.rounds)
	if err != nil {
		return s, run.Usage(err)
	}
	if err := p.CheckSpace(); err != nil {
		return s, err
	}
	if f.saveDir != "" {
		if st, err := os.Stat(f.saveDir); err != nil || !st.IsDir() {
			return s, run.Usagef("--save-dir %s: not an existing directory", f.saveDir)
		}
	}
	s.plan = p
	return s, nil
}

// runTune runs every combination's rounds and prints the comparison. Each
// run's scratch directory is gone before the next starts, and before
// anything is printed. The text report is tune's table; the others are
// the reporters' own, of the result that holds every run.
func runTune(ctx context.Context, s tuneSpec, stdout io.Writer) error {
	sum, res, err := s.plan.Measure(ctx, tune.Options{SaveDir: s.saveDir, Args: s.args, Progress: s.progress})
	if s.output != "text" {
		return conclude(ctx, stdout, s.output, res, err)
	}
	return concludeWith(res, err, func() error {
		if err := tune.WriteText(stdout, sum); err != nil {
			return err
		}
		if err := tune.WriteTrailer(stdout, s.saveDir, res.Interrupted, res.Failed(), len(sum.Runs), len(s.plan.Combinations)*s.plan.Rounds); err != nil {
			return err
		}
		return reportFilesFrom(ctx).Write([]*result.Result{res}, nil) // the root's --html and --textfile
	})
}

func newTuneCmd(stdout, stderr io.Writer) *cobra.Command {
	f := &tuneFlags{}
	cmd := &cobra.Command{
		Use:   "tune --dir DIR --vary NAME=v1,v2,... [--vary ...]",
		Short: "Measure what etcd settings are worth: one load under every combination of them",
		Long: `Runs the same etcd load against a fresh embedded etcd (1 or 3 members, data
in a scratch directory in DIR, removed after each run) under every combination
of the values given with --vary, each combination --rounds times in
alternating order (round 1 in order, round 2 reversed, ...), and prints per
combination the median and range over the rounds of throughput, latency p50
and p99, etcd's WAL fsync and backend commit p99 (slowest member) and leader
changes, and which differences are larger than the noise: those whose ranges
over the rounds do not overlap.

Combinations etcd itself refuses (an election timeout below 5 x the heartbeat
interval, over 50000 ms...) are refused before anything runs, with etcd's rule
and where etcd enforces it. See docs/tune.md.` + exitCodesHelp,
		Example: `  etcdbench tune --dir /var/lib/etcd --vary snapshot-count=10000,100000
  etcdbench tune --dir . --vary heartbeat-interval=100,150 --vary election-timeout=1000,1500 --vary members=3
  etcdbench tune --vary dir=/mnt/ssd,/mnt/hdd --rounds 5 --save-dir results/`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := f.resolve(cmd)
			if err != nil {
				return err
			}
			if run.IsTerminal(stderr) && !f.prog.noProgress {
				s.progress = stderr // its lines also with -o json
			}
			return runTune(cmd.Context(), s, stdout)
		},
	}
	f.register(cmd.Flags())
	return cmd
}

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"etcdbench/internal/etcdcluster"
	"etcdbench/internal/etcdload"
	"etcdbench/internal/result"
	"etcdbench/internal/scratch"
	"etcdbench/internal/tune"
	"etcdbench/internal/units"
)

// tuneFlags are the flags of `etcdbench tune`.
type tuneFlags struct {
	dir, output, saveDir string
	vary                 []string
	rounds               int
	noProgress           bool
	workload             string
	conns, clients       int
	total                int64
	duration             string
	rate                 float64
	keySize, valSize     int
	keySpaceSize         int
	sequentialKeys       bool
	consistency, target  string
	txnOps               int
	readRatio            float64
}

// Defaults of tune's load: short, but with enough concurrency that etcd
// batches its WAL writes as it does under real load.
const (
	tuneClients  = 16
	tuneTotal    = 20000
	tuneDuration = "10s"
)

// tuneWorkloads are the loads tune can send: watch is left out, its
// figures are event latencies that the table does not compare.
var tuneWorkloads = []etcdload.Op{etcdload.OpPut, etcdload.OpRange, etcdload.OpTxn, etcdload.OpMixed}

func (f *tuneFlags) register(fs *pflag.FlagSet) {
	d := etcdload.DefaultLoad(etcdload.OpPut)
	var names []string
	for _, s := range tune.Settings {
		names = append(names, s.Name)
	}
	fs.StringVar(&f.dir, "dir", "", "directory on the disk to test: each run's embedded etcd gets a fresh scratch directory inside it (or vary it: --vary dir=A,B)")
	fs.StringArrayVar(&f.vary, "vary", nil, "a setting and its values, NAME=v1,v2,...; repeat for more settings, every combination runs. NAME: "+strings.Join(names, ", "))
	fs.IntVar(&f.rounds, "rounds", 3, "runs of each combination, alternating the order (3 or more to tell differences from noise)")
	fs.StringVarP(&f.output, "output", "o", "text", "report format: text (the comparison table), json or html (the runs and the summary as one result); prom is refused, see --save-dir")
	fs.StringVar(&f.saveDir, "save-dir", "", "also save every run's result as JSON in this existing directory (for etcdbench report/compare)")
	fs.BoolVar(&f.noProgress, "no-progress", false, "no progress lines on stderr")
	fs.StringVar(&f.workload, "workload", "put", "the load of every run: put, range, txn or mixed (as etcdbench etcd <workload>)")
	fs.IntVar(&f.conns, "conns", d.Conns, "gRPC connections")
	fs.IntVar(&f.clients, "clients", tuneClients, "concurrent clients, spread over the connections")
	fs.StringVar(&f.target, "target", d.Target, "which members the connections talk to: all or leader")
	fs.Int64Var(&f.total, "total", tuneTotal, "requests per run")
	fs.StringVar(&f.duration, "duration", tuneDuration, "longest run; with --total, whichever comes first")
	fs.Float64Var(&f.rate, "rate", d.Rate, "requests per second over all clients (open loop); 0: closed loop")
	fs.IntVar(&f.keySize, "key-size", d.KeySize, "key bytes after the /etcdbench/<run-id>/ prefix")
	fs.IntVar(&f.valSize, "val-size", d.ValSize, "value bytes")
	fs.IntVar(&f.keySpaceSize, "key-space-size", 0, "distinct keys (default: the workload's, 1, or 1000 for mixed)")
	fs.BoolVar(&f.sequentialKeys, "sequential-keys", false, "use keys in order instead of at random")
	fs.StringVar(&f.consistency, "consistency", d.Consistency, "range and mixed: l (linearizable) or s (serializable)")
	fs.IntVar(&f.txnOps, "txn-ops", d.TxnOps, "txn: puts per transaction")
	fs.Float64Var(&f.readRatio, "read-ratio", d.ReadRatio, "mixed: share of ranges among the requests")
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
	s := tuneSpec{output: f.output, saveDir: f.saveDir, args: redactArgs(commandLine(cmd))}
	if err := checkFormat("--output", f.output); err != nil {
		return s, err
	}
	// Every run of a tune is a workload of the same name: one exposition
	// cannot hold them (it would repeat series), and one file per run is
	// what --save-dir and report are for.
	if files := reportFilesFrom(cmd.Context()); f.output == "prom" || (files != nil && files.textfile != "") {
		return s, usagef("tune has no Prometheus output (its runs would repeat one series): save the runs with --save-dir DIR and set them side by side with 'etcdbench compare DIR/tune-*.json'")
	}
	op := etcdload.Op(f.workload)
	if !containsOp(tuneWorkloads, op) {
		return s, usagef("--workload %q: want put, range, txn or mixed", f.workload)
	}
	var vs []tune.Vary
	varied := map[string]bool{}
	for _, a := range f.vary {
		v, err := tune.ParseVary(a)
		if err != nil {
			return s, usageError{err}
		}
		varied[v.Setting.Name] = true
		vs = append(vs, v)
	}
	if len(vs) == 0 {
		return s, usagef("nothing to vary: give --vary NAME=v1,v2,... (e.g. --vary snapshot-count=10000,100000)")
	}
	for _, name := range []string{"clients", "conns", "val-size", "dir"} {
		if varied[name] && cmd.Flags().Changed(name) {
			return s, usagef("--%s and --vary %s are alternatives: give the values in --vary", name, name)
		}
	}
	if f.dir == "" && !varied["dir"] {
		return s, usagef("--dir is required (the directory on the disk to test), or --vary dir=A,B")
	}
	base := tune.Config{Embedded: etcdcluster.Options{Members: 1}}
	if f.dir != "" {
		abs, err := scratch.Check(f.dir)
		if err != nil {
			return s, err
		}
		base.Dir = abs
	}
	l, err := f.load(cmd, op)
	if err != nil {
		return s, err
	}
	base.Load = l
	p, err := tune.NewPlan(base, vs, f.rounds, loadText(l))
	if err != nil {
		return s, usageError{err}
	}
	if err := checkTuneSpace(p); err != nil {
		return s, err
	}
	if f.saveDir != "" {
		if st, err := os.Stat(f.saveDir); err != nil || !st.IsDir() {
			return s, usagef("--save-dir %s: not an existing directory", f.saveDir)
		}
	}
	s.plan = p
	return s, nil
}

// load is the load every combination starts from: the workload's
// defaults, tune's shorter defaults, and the flags given.
func (f *tuneFlags) load(cmd *cobra.Command, op etcdload.Op) (etcdload.Load, error) {
	l := etcdload.DefaultLoad(op)
	l.Conns, l.Clients, l.Total, l.Rate, l.Target = f.conns, f.clients, f.total, f.rate, f.target
	l.KeySize, l.ValSize, l.SequentialKeys = f.keySize, f.valSize, f.sequentialKeys
	if f.keySpaceSize != 0 {
		l.KeySpaceSize = f.keySpaceSize
	}
	ch := cmd.Flags().Changed
	for _, c := range []struct {
		flag string
		ok   bool
	}{{"consistency", op == etcdload.OpRange || op == etcdload.OpMixed}, {"txn-ops", op == etcdload.OpTxn}, {"read-ratio", op == etcdload.OpMixed}} {
		if ch(c.flag) && !c.ok {
			return l, usagef("--%s does not apply to --workload %s", c.flag, op)
		}
	}
	l.Consistency, l.TxnOps, l.ReadRatio = f.consistency, f.txnOps, f.readRatio
	d, err := units.ParseDuration(f.duration)
	if err != nil || d <= 0 {
		return l, usagef("--duration %q: want a positive duration such as 10s", f.duration)
	}
	l.Duration = d
	if ch("duration") && !ch("total") {
		l.Total = 0
	}
	return l, nil
}

func containsOp(ops []etcdload.Op, op etcdload.Op) bool {
	for _, o := range ops {
		if o == op {
			return true
		}
	}
	return false
}

// loadText describes the base load for the table's heading.
func loadText(l etcdload.Load) string {
	return fmt.Sprintf("%s, %d clients on %d connection(s), %s (each run on a fresh embedded etcd)", l.Name(), l.Clients, l.Conns, plan(l))
}

// checkTuneSpace checks, before the first run, that every directory has
// room for the largest embedded etcd that will run in it.
func checkTuneSpace(p tune.Plan) error {
	need := map[string]int64{}
	for _, c := range p.Combinations {
		m := max(c.Config.Embedded.Members, 1)
		need[c.Config.Dir] = max(need[c.Config.Dir], embeddedSpace(m))
	}
	for dir, n := range need {
		if err := scratch.CheckFree(dir, n); err != nil {
			return fmt.Errorf("%w; free some space for the embedded etcd", err)
		}
	}
	return nil
}

// runTune runs every combination's rounds and prints the comparison. Each
// run's scratch directory is gone before the next starts, and before
// anything is printed.
func runTune(ctx context.Context, s tuneSpec, stdout io.Writer) error {
	total := len(s.plan.Combinations) * s.plan.Rounds
	tuneID := time.Now().UTC().Format("20060102T150405Z")
	res := newResult(s.args)
	started := 0
	runOne := func(ctx context.Context, c tune.Combination, sl tune.Slot) (*result.Result, error) {
		l := c.Config.Load
		l.RunID = etcdload.NewRunID()
		started++
		if s.progress != nil {
			fmt.Fprintf(s.progress, "tune: run %d of %d: round %d, %s (%s)\n", started, total, sl.Round, c.ID(), c.Label())
		}
		return measureEtcd(ctx, etcdSpec{load: l, embedded: c.Config.Embedded, dir: c.Config.Dir, output: s.output, args: s.args, progress: s.progress})
	}
	done := func(r tune.Run) error {
		if s.saveDir == "" {
			return nil
		}
		path, err := tune.Save(s.saveDir, tune.FileName(tuneID, s.plan.Combinations[r.Combination], r.Round), r.Result)
		if err == nil && s.progress != nil {
			fmt.Fprintf(s.progress, "tune: run %d of %d saved as %s\n", r.Order, total, path)
		}
		return err
	}
	runs, err := s.plan.Execute(ctx, runOne, done)
	if len(runs) == 0 {
		return err
	}
	sum := tune.Summarize(s.plan.Load, s.plan.Combinations, s.plan.Rounds, runs)
	tune.Combine(res, sum, runs)
	if err != nil && ctx.Err() != nil {
		res.Interrupted = true
		res.Finish(time.Now().UTC())
	}
	var rerr error
	if s.output == "text" {
		rerr = tune.WriteText(stdout, sum)
		if rerr == nil {
			rerr = tuneTrailer(stdout, s, res, len(sum.Runs), total)
		}
	} else {
		rerr = render(stdout, s.output, res)
	}
	if rerr == nil {
		rerr = reportFilesFrom(ctx).write(res) // the root's --html and --textfile
	}
	switch {
	case err != nil || rerr != nil:
		return errors.Join(err, rerr)
	case res.Failed():
		return errFailed
	}
	return nil
}

// tuneTrailer says where the runs were saved and whether the tune was
// cut short.
func tuneTrailer(w io.Writer, s tuneSpec, res *result.Result, done, total int) error {
	var b strings.Builder
	if s.saveDir != "" {
		fmt.Fprintf(&b, "\nEvery run's result is saved in %s (tune-*-<combination>-r<round>-*.json).\n", s.saveDir)
	}
	if res.Interrupted {
		fmt.Fprintf(&b, "\nInterrupted: %d of %d runs finished, and the table covers only those.\n", done, total)
	} else if res.Failed() {
		b.WriteString("\nAt least one run FAILED one of etcd's disk limits (verdicts column; the JSON output or the saved runs have the verdicts).\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func newTuneCmd(stdout, stderr io.Writer) *cobra.Command {
	f := &tuneFlags{}
	cmd := &cobra.Command{
		Use:   "tune --dir DIR --vary NAME=v1,v2,... [--vary ...]",
		Short: "Measure what etcd settings are worth: the same load on a fresh embedded etcd under every combination, alternated over rounds",
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
and where etcd enforces it. See docs/tune.md.`,
		Example: `  etcdbench tune --dir /var/lib/etcd --vary snapshot-count=10000,100000
  etcdbench tune --dir . --vary heartbeat-interval=100,150 --vary election-timeout=1000,1500 --vary members=3
  etcdbench tune --vary dir=/mnt/ssd,/mnt/hdd --rounds 5 --save-dir results/`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := f.resolve(cmd)
			if err != nil {
				return err
			}
			if isTerminal(stderr) && !f.noProgress {
				s.progress = stderr
			}
			return runTune(cmd.Context(), s, stdout)
		},
	}
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	f.register(cmd.Flags())
	return cmd
}

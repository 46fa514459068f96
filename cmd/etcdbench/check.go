package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"etcdbench/internal/check"
	"etcdbench/internal/disk"
	"etcdbench/internal/etcdcluster"
	"etcdbench/internal/etcdload"
	"etcdbench/internal/result"
	"etcdbench/internal/sysinfo"
	"etcdbench/internal/trace"
	"etcdbench/internal/verdict"
)

// wholeCheckFlags are the flags of `etcdbench check` (and of etcdbench with no
// command).
type wholeCheckFlags struct {
	dir, output         string
	quick, thorough     bool
	noProgress, noTrace bool
}

func (f *wholeCheckFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.dir, "dir", ".", "directory on the disk to check (e.g. the filesystem of /var/lib/etcd); a scratch directory is made inside it and removed afterwards")
	fs.BoolVar(&f.quick, "quick", false, "the quick budget: the WAL idle and under load, a short etcd put/range (about 20 s)")
	fs.BoolVar(&f.thorough, "thorough", false, "the thorough budget: every disk workload at the seed articles' sizes and longer etcd loads (several minutes)")
	fs.StringVarP(&f.output, "output", "o", "text", "report format: "+strings.Join(formats, ", "))
	fs.BoolVar(&f.noProgress, "no-progress", false, "no live progress line on stderr")
	fs.BoolVar(&f.noTrace, "no-trace", false, "do not time the embedded etcd's own fdatasyncs with eBPF (done by default when allowed, for the prediction)")
}

// budget is the time budget the flags choose.
func (f *wholeCheckFlags) budget() (check.Budget, error) {
	name := "default"
	switch {
	case f.quick && f.thorough:
		return check.Budget{}, usagef("--quick and --thorough are alternatives")
	case f.quick:
		name = "quick"
	case f.thorough:
		name = "thorough"
	}
	return check.BudgetNamed(name)
}

func newWholeCheckCmd(stdout, stderr io.Writer) *cobra.Command {
	f := &wholeCheckFlags{}
	cmd := &cobra.Command{
		Use:   "check [--dir DIR] [--quick|--thorough]",
		Short: "The whole answer: the disk's etcd I/O and a real etcd on it, in one verdict table",
		Long:  checkLong,
		Args:  noArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return runCheckCommand(cmd, f, stdout, stderr) },
	}
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	f.register(cmd.Flags())
	return cmd
}

const checkLong = `Checks a directory's disk for etcd in one run: the WAL fdatasync check, the
disk workloads of the budget (the WAL under load among them), then an embedded
etcd started on the same disk under a put and a range load while its own WAL
fsync and backend commit metrics are read (and, with root, its fdatasyncs
timed by eBPF). One verdict table, worst first, says what was checked, the
figure, the limit and its source; "prediction" shows how the synthetic WAL
p99 compared with the real etcd's. The exit code is the worst verdict's:
0 PASS or WARN, 1 FAIL.

Budgets: --quick (about 20 s), the default (about a minute), --thorough
(several minutes).`

// runCheckCommand validates the flags and runs the check.
func runCheckCommand(cmd *cobra.Command, f *wholeCheckFlags, stdout, stderr io.Writer) error {
	if err := checkFormat("--output", f.output); err != nil {
		return err
	}
	b, err := f.budget()
	if err != nil {
		return err
	}
	ws, err := checkWorkloads(b)
	if err != nil {
		return err
	}
	var progress io.Writer
	if showProgress(stderr, f.noProgress, f.output) {
		progress = stderr
	}
	res, err := runCheck(cmd.Context(), checkRun{
		dir: f.dir, budget: b, workloads: ws, trace: !f.noTrace, progress: progress, args: commandLine(cmd),
	})
	return conclude(cmd.Context(), stdout, f.output, res, err)
}

// checkWorkloads builds the budget's disk workloads from its preset.
func checkWorkloads(b check.Budget) ([]disk.Named, error) {
	p, err := disk.PresetNamed(b.DiskPreset)
	if err != nil {
		return nil, err
	}
	specs := map[string]disk.Spec{}
	for _, s := range disk.Specs() {
		specs[s.Name] = s
	}
	var ws []disk.Named
	for _, name := range b.Disk {
		spec, ok := specs[name]
		if !ok {
			return nil, fmt.Errorf("check budget %s names an unknown disk workload %q", b.Name, name)
		}
		w, err := build(spec, p, nil)
		if err != nil {
			return nil, err
		}
		ws = append(ws, disk.Named{Name: name, Workload: w})
	}
	return ws, nil
}

// checkRun is one validated check.
type checkRun struct {
	dir       string
	budget    check.Budget
	workloads []disk.Named
	trace     bool
	progress  io.Writer // a terminal, or nil
	args      []string
}

// runCheck runs the disk workloads, then the embedded etcd's loads, in one
// scratch directory that is removed before it returns. An interrupted check
// returns what it measured with the context's error.
func runCheck(ctx context.Context, c checkRun) (res *result.Result, err error) {
	need := max(disk.SpaceNeeded(c.workloads), embeddedSpace(c.budget.Members))
	dir, sd, stale, err := openScratch(c.dir, need, "free some space, or use --quick")
	if err != nil {
		return nil, err
	}
	defer func() {
		if rerr := sd.Remove(); rerr != nil && err == nil {
			err = rerr
		}
	}()
	res = newResult(c.args)
	res.Environment = sysinfo.Collect("/", dir)
	finish := func(wls []result.Workload, err error) (*result.Result, error) {
		interrupted := ctx.Err() != nil && err != nil
		if err != nil && !interrupted {
			return nil, err
		}
		if len(wls) > 0 {
			for _, p := range stale {
				wls[0].Notes = append(wls[0].Notes, "removed a scratch directory left by a killed run: "+p)
			}
		}
		if len(wls) > 0 {
			wls = append(wls, check.Summarize(wls))
		}
		res.Workloads, res.Interrupted = wls, interrupted
		res.Finish(time.Now().UTC())
		return res, err
	}

	diskDir := filepath.Join(sd.Path, "disk")
	if err := os.Mkdir(diskDir, 0o700); err != nil {
		return nil, err
	}
	env := disk.Env{Dir: diskDir, Root: "/", Facts: res.Environment, Thresholds: verdict.Defaults()}
	total := len(c.workloads) + 2
	var prog *progressLine
	if c.progress != nil {
		prog = newProgressLine(c.progress, total)
		env.OnSecond = prog.update
	}
	wls, err := disk.RunSuite(ctx, env, c.workloads, func(i int, name string) {
		if prog != nil {
			prog.start(i, name)
		}
	})
	if err == nil {
		err = os.RemoveAll(diskDir) // the etcd's space
	}
	if err != nil {
		if prog != nil {
			prog.clear()
		}
		return finish(wls, err)
	}
	etcdWls, err := checkEtcd(ctx, c, filepath.Join(sd.Path, "etcd"), prog)
	if prog != nil {
		prog.clear()
	}
	return finish(append(wls, etcdWls...), err)
}

// checkEtcd starts the embedded etcd in dir and runs the budget's put and
// range loads on it, the put load traced by eBPF when asked and allowed.
func checkEtcd(ctx context.Context, c checkRun, dir string, prog *progressLine) ([]result.Workload, error) {
	if err := os.Mkdir(dir, 0o700); err != nil {
		return nil, err
	}
	cluster, err := startEmbedded(ctx, etcdcluster.Options{Dir: dir, Members: c.budget.Members})
	if err != nil {
		return nil, err
	}
	defer cluster.Close()
	bo := etcdload.BenchOptions{Targets: etcdload.EmbeddedTargets(cluster.MetricsURLs()), Thresholds: verdict.Defaults()}
	var out []result.Workload
	for i, op := range []etcdload.Op{etcdload.OpPut, etcdload.OpRange} {
		shape := c.budget.Put
		if op == etcdload.OpRange {
			shape = c.budget.Range
		}
		l := shape.Load(op)
		l.Client.Endpoints, l.RunID = cluster.Endpoints(), etcdload.NewRunID()
		if prog != nil {
			prog.start(len(c.workloads)+i, l.Name())
			name := prog.prefix()
			l.OnSecond = func(el time.Duration, sent int64) {
				fmt.Fprintf(prog.w, "\r\033[K%s %4.0fs  %d requests sent", name, el.Seconds(), sent)
			}
		}
		var stopTrace func() ([]result.Latency, string)
		if pids := cluster.PIDs(); op == etcdload.OpPut && c.trace && len(pids) == 1 {
			stopTrace = traceMember(ctx, pids[0])
		}
		o, err := etcdload.Bench(ctx, l, bo)
		if stopTrace != nil {
			lats, note := stopTrace()
			if o != nil {
				o.Workload.Latencies = append(o.Workload.Latencies, lats...)
			}
			if o != nil && note != "" {
				o.Workload.Notes = append(o.Workload.Notes, note)
			}
		}
		if o != nil {
			out = append(out, o.Workload)
		}
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// traceMember traces the fdatasyncs of the embedded etcd's member process
// pid until the returned function is called, which gives the WAL sync
// latency as check.TracedLatency and without its waits for a CPU as
// check.TracedDiskLatency, or a note saying why there are none.
func traceMember(ctx context.Context, pid int) func() ([]result.Latency, string) {
	tctx, cancel := context.WithCancel(ctx)
	type outcome struct {
		tr  *trace.Trace
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		tr, err := trace.Run(tctx, trace.Options{PID: pid})
		done <- outcome{tr, err}
	}()
	return func() ([]result.Latency, string) {
		cancel()
		o := <-done
		if o.tr == nil {
			return nil, "the embedded etcd's fdatasyncs were not traced (" + oneLine(o.err) + "); the prediction uses etcd's histogram"
		}
		w, err := o.tr.Workload(verdict.Defaults())
		if err != nil {
			return nil, "the trace of the embedded etcd could not be read: " + err.Error()
		}
		l := w.Latency("wal sync")
		if l == nil {
			return nil, "the eBPF trace saw no WAL fdatasync of the embedded etcd"
		}
		cp := *l
		cp.Name = check.TracedLatency
		lats := []result.Latency{cp}
		note := fmt.Sprintf("%s: the embedded etcd's %d WAL fdatasyncs, timed by eBPF in the kernel during the load", check.TracedLatency, cp.Count)
		if own := w.Latency("wal sync without cpu wait"); own != nil {
			d := *own
			d.Name = check.TracedDiskLatency
			lats = append(lats, d)
			note += fmt.Sprintf("; %s: the same without the time their thread waited for a CPU", check.TracedDiskLatency)
		}
		return lats, note
	}
}

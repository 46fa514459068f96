package main

import (
	"io"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"etcdbench/internal/check"
)

// wholeCheckFlags are the flags of `etcdbench check` (and of etcdbench with no
// command).
type wholeCheckFlags struct {
	dir     dirFlag
	speed   speedFlags
	noTrace bool
	cpu     bool
	out     outputFlags
	prog    progressFlags
}

func (f *wholeCheckFlags) register(fs *pflag.FlagSet) {
	f.dir.register(fs, ".", "directory on the disk to check (e.g. the filesystem of /var/lib/etcd); a scratch directory is made inside it and removed afterwards")
	f.speed.register(fs, "the quick budget: the WAL idle and under load, a short etcd put/range, capacity's etcd side in short steps (about 40 s)",
		"the thorough budget: every disk workload at the seed articles' sizes and longer etcd loads (several minutes)")
	f.out.register(fs)
	f.prog.register(fs)
	fs.BoolVar(&f.noTrace, "no-trace", false, "do not time the embedded etcd's own fdatasyncs with eBPF (done by default when allowed, for the prediction)")
	fs.BoolVar(&f.cpu, "cpu", true, "after the etcd loads, sweep the embedded etcd as capacity's etcd side does (cpu-capacity) and state the put rate an etcd on this storage and machine carries; --cpu=false: no estimate (the default budget's disk sweep still runs)")
}

// budget is the time budget the flags choose.
func (f *wholeCheckFlags) budget() (check.Budget, error) {
	name, err := f.speed.name("default", "", false)
	if err != nil {
		return check.Budget{}, err
	}
	b, err := check.BudgetNamed(name)
	if !f.cpu {
		b.EtcdCapacity = nil
	}
	return b, err
}

func newWholeCheckCmd(stdout, stderr io.Writer) *cobra.Command {
	f := &wholeCheckFlags{}
	cmd := &cobra.Command{
		Use:   "check [--dir DIR] [--quick|--thorough]",
		Short: "Check a disk for etcd: its I/O, a real etcd on it, and the load it carries",
		Long:  checkLong,
		Args:  noArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return runCheckCommand(cmd, f, stdout, stderr) },
	}
	f.register(cmd.Flags())
	return cmd
}

const checkLong = `Checks a directory's disk for etcd in one run: the WAL fdatasync check, the
disk workloads of the budget (the WAL under load and the capacity sweep among
them), then an embedded etcd started on the same disk under a put and a range
load while its own WAL fsync and backend commit metrics are read (and, with
root, its fdatasyncs timed by eBPF), then capacity's etcd side on it. The
"check" section answers: first the put rate an etcd on this storage and
machine carries (capacity's estimate), then the findings, worst first, with
what to do, then how the synthetic WAL p99 compared with the real etcd's.
The verdict table lists every verdict worst first: the workload, what was
checked, the figure and the limit.

Budgets: --quick (about 40 s), the default (about a minute), --thorough
(several minutes).` + exitCodesHelp

// runCheckCommand validates the flags and runs the check.
func runCheckCommand(cmd *cobra.Command, f *wholeCheckFlags, stdout, stderr io.Writer) error {
	if err := f.out.check(); err != nil {
		return err
	}
	b, err := f.budget()
	if err != nil {
		return err
	}
	res, err := check.Run(cmd.Context(), check.Config{
		Dir: f.dir.path, Budget: b, Trace: !f.noTrace, Args: commandLine(cmd), RunLonger: runLongerFlag(cmd, b.Name),
		Progress: f.prog.terminal(stderr, f.out.output),
	})
	return conclude(cmd.Context(), stdout, f.out.output, res, err)
}

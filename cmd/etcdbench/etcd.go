package main

import (
	"context"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"etcdbench/internal/etcdload"
	"etcdbench/internal/etcdrun"
	"etcdbench/internal/run"
	"etcdbench/internal/tune"
)

// etcdFlags are the flags every command that runs one etcd load shares:
// where it runs (an embedded etcd on --dir, or --endpoints with --yes),
// the report, the embedded etcd's settings, the maintenance after the
// load, and etcdctl's TLS and auth flags.
type etcdFlags struct {
	dir             dirFlag
	endpoints       []string
	yes             bool
	compact, defrag bool
	out             outputFlags
	prog            progressFlags
	embed           tune.EmbeddedFlags
	security        securityFlags
}

func (f *etcdFlags) register(fs *pflag.FlagSet) {
	f.dir.register(fs, "", "directory on the disk to test: the embedded etcd's data goes into a scratch directory inside it, removed afterwards")
	fs.StringSliceVar(&f.endpoints, "endpoints", nil, "client URLs of an external cluster (a,b,c) instead of an embedded etcd; writing to it needs --yes")
	fs.BoolVar(&f.yes, "yes", false, "write to the external cluster of --endpoints (keys under /etcdbench/<run-id>/, deleted afterwards)")
	f.out.register(fs)
	f.prog.register(fs)
	fs.BoolVar(&f.compact, "compact-after", false, "compact the key history after the load (on a shared cluster this drops every key's older revisions)")
	fs.BoolVar(&f.defrag, "defrag-after", false, "defragment each endpoint's member after the load (blocks that member while it runs)")
	f.embed.Register(fs)
	f.security.register(fs)
}

// where checks --dir against --endpoints before the load is built.
func (f *etcdFlags) where(cmd *cobra.Command) error {
	if err := f.out.check(); err != nil {
		return err
	}
	if len(f.endpoints) > 0 {
		if cmd.Flags().Changed("dir") {
			return run.Usagef("--dir and --endpoints are alternatives: --dir starts an embedded etcd there, --endpoints uses a running cluster")
		}
	} else if err := f.dir.require(dirWhat, "--endpoints for a running cluster"); err != nil {
		return err
	}
	if f.embed.Members() != 1 && f.embed.Members() != 3 {
		return run.Usagef("--members %d: want 1 or 3", f.embed.Members())
	}
	return nil
}

// spec checks the load l (its endpoints are the flags') and the rest of
// the flags, and builds the run: plan says what the load writes, for the
// refusal to write to a cluster without --yes (etcd check and etcd
// capacity refuse before, with their own plan, and give none).
func (f *etcdFlags) spec(cmd *cobra.Command, stderr io.Writer, l etcdload.Load, plan string) (etcdrun.Spec, error) {
	s := etcdrun.Spec{Dir: f.dir.path, Args: redactArgs(commandLine(cmd)), After: etcdload.Maintenance{Compact: f.compact, Defrag: f.defrag}}
	external := len(f.endpoints) > 0
	if l.RunID == "" {
		l.RunID = etcdload.NewRunID()
	}
	l.Client.Endpoints = f.endpoints
	if !external {
		// Validate needs endpoints; the embedded ones are known only later.
		l.Client.Endpoints = []string{"http://127.0.0.1:0"}
	}
	if err := l.Validate(); err != nil {
		return s, run.Usage(err)
	}
	if !external {
		l.Client.Endpoints = nil
	}
	opts, err := f.embed.Options()
	if err != nil {
		return s, err
	}
	s.Embedded = opts
	if err := f.refuseWrites(plan + " (deleted afterwards)"); err != nil {
		return s, err
	}
	sec, eps, err := f.security.resolve(cmd, l.Client.Endpoints, os.Stdin, cmd.ErrOrStderr())
	if err != nil {
		return s, err
	}
	l.Client.Endpoints = eps
	l.Client.TLS, l.Client.Username, l.Client.Password = sec.tls, sec.user, sec.password
	s.Load = l
	s.Progress = f.prog.terminal(stderr, f.out.output)
	return s, nil
}

// runEtcd runs the etcd load and prints the report after the scratch
// directory is gone, as runDisk does.
func runEtcd(ctx context.Context, s etcdrun.Spec, output string, stdout io.Writer) error {
	res, err := etcdrun.Measure(ctx, s)
	return conclude(ctx, stdout, output, res, err)
}

func newEtcdCmd(stdout, stderr io.Writer) *cobra.Command {
	var names []string // the workloads, from the subcommands registered
	cmd := &cobra.Command{
		Use:   "etcd",
		Short: "Load a real etcd (embedded on --dir, or --endpoints) and read its own disk metrics",
		Args: func(c *cobra.Command, args []string) error {
			if len(args) > 0 {
				return run.Usagef("unknown etcd workload %q: want %s or %s%s", args[0], strings.Join(names[:len(names)-1], ", "), names[len(names)-1], suggest(c, args[0]))
			}
			return nil
		},
		FParseErrWhitelist: cobra.FParseErrWhitelist{UnknownFlags: true},
		RunE: func(*cobra.Command, []string) error {
			return run.Usagef("missing workload: etcdbench etcd %s", strings.Join(names, "|"))
		},
	}
	for _, k := range etcdload.Kinds() {
		cmd.AddCommand(newEtcdLoadCmd(k, stdout, stderr))
	}
	cmd.AddCommand(newEtcdCheckCmd(stdout, stderr), newEtcdCapacityCmd(stdout, stderr))
	for _, c := range cmd.Commands() {
		names = append(names, c.Name())
	}
	return cmd
}

// newEtcdLoadCmd makes the command of one etcd load: put, range, txn,
// watch or mixed.
func newEtcdLoadCmd(k etcdload.Kind, stdout, stderr io.Writer) *cobra.Command {
	f := &etcdFlags{}
	lf := &loadFlags{}
	cmd := &cobra.Command{
		Use:   string(k.Op) + " --dir DIR | --endpoints URLS --yes",
		Short: "Send " + k.Brief + " like etcd's benchmark tool and judge etcd's own disk histograms",
		Long: `Sends ` + k.What + ` to an etcd and reports throughput, latency percentiles, errors
by kind and a per-second series. With --dir, an embedded etcd (1 or 3 members)
runs with its data in a scratch directory inside DIR, removed afterwards, and
its own /metrics are read before and after the load: the WAL fsync and
backend commit p99 of the load are judged against etcd's limits. Every key is
under /etcdbench/<run-id>/, which must be empty and is deleted afterwards,
also on errors and Ctrl-C.` + exitCodesHelp,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := f.where(cmd); err != nil {
				return err
			}
			l := etcdload.DefaultLoad(k.Op)
			l.RunID = etcdload.NewRunID()
			if err := lf.apply(cmd, &l); err != nil {
				return err
			}
			s, err := f.spec(cmd, stderr, l, "this run sends "+l.Plan()+" under "+l.Prefix())
			if err != nil {
				return err
			}
			return runEtcd(cmd.Context(), s, f.out.output, stdout)
		},
	}
	lf.register(cmd.Flags(), etcdload.DefaultLoad(k.Op), []etcdload.Kind{k}, "run this long (e.g. 30s); with --total, whichever comes first")
	f.register(cmd.Flags())
	return cmd
}

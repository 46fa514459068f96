package main

import (
	"io"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"etcdbench/internal/diagnose/data"
	"etcdbench/internal/run"
	"etcdbench/internal/units"
)

// diagnoseDataFlags are the flags of `diagnose data`.
type diagnoseDataFlags struct {
	dataDir, snapshot, timeout string
	memoryLimit                string
	endpoints                  []string
	top                        int
	predict                    bool
	dir                        dirFlag
	out                        outputFlags
	tls                        tlsFlags
}

func (f *diagnoseDataFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.dataDir, "data-dir", "", "a stopped member's data dir (member/snap/db), read-only: nothing in it is written")
	fs.StringVar(&f.snapshot, "snapshot", "", "a snapshot `FILE` saved by etcdctl snapshot save")
	fs.StringSliceVar(&f.endpoints, "endpoints", nil, "a live member's client URL: its snapshot is streamed into a scratch directory under --dir, analysed and removed")
	fs.StringVar(&f.timeout, "timeout", data.DefaultTimeout.String(), "deadline of each call to the member (the snapshot stream excepted)")
	fs.IntVar(&f.top, "top", data.DefaultTop, "keys in each top list")
	fs.BoolVar(&f.predict, "predict", true, "predict the restart, defragmentation and snapshot send on the disk under --dir (probes write there), and what LISTs cost the member's memory")
	fs.StringVar(&f.memoryLimit, "memory-limit", "", "the member's memory limit, e.g. 2GiB (default: its cgroup's when its endpoint is served on this machine, else the machine's memory)")
	f.dir.register(fs, "", "directory on the disk the predictions probe and an online snapshot is streamed to (a scratch directory inside it, removed afterwards)")
	f.out.register(fs)
	f.tls.register(fs)
}

// resolve validates the flags into the analysis' config.
func (f *diagnoseDataFlags) resolve(cmd *cobra.Command) (data.Config, error) {
	c := data.Config{DataDir: f.dataDir, Snapshot: f.snapshot, Dir: f.dir.path, Predict: f.predict, Top: f.top, Args: commandLine(cmd)}
	if err := f.out.check(); err != nil {
		return c, err
	}
	eps := nonEmpty(f.endpoints)
	c.Endpoints = eps
	if err := c.Check(); err != nil {
		return c, err
	}
	t, err := units.ParseDuration(f.timeout)
	if err != nil || t <= 0 {
		return c, run.Usagef("--timeout %q: want a positive duration such as 5s", f.timeout)
	}
	c.Timeout = t
	if f.memoryLimit != "" {
		if c.MemoryLimit, err = units.ParseSize(f.memoryLimit); err != nil || c.MemoryLimit <= 0 {
			return c, run.Usagef("--memory-limit %q: want a positive size such as 2GiB", f.memoryLimit)
		}
	}
	if err := f.tls.check(); err != nil {
		return c, err
	}
	if len(eps) == 0 {
		if len(f.tls.given(cmd)) > 0 {
			return c, run.Usagef("the TLS flags go with --endpoints")
		}
		return c, nil
	}
	c.Endpoints, c.TLS, c.HTTP, err = f.tls.endpointClients(cmd, eps, "--endpoints")
	return c, err
}

// newDiagnoseDataCmd is 'etcdbench diagnose data'.
func newDiagnoseDataCmd(stdout io.Writer) *cobra.Command {
	f := &diagnoseDataFlags{}
	cmd := &cobra.Command{
		Use:   "data --data-dir DIR | --snapshot FILE | --endpoints URL [--dir DIR]",
		Short: "Show what fills etcd's database and what it costs on the disk",
		Long: `Reads one member's database - a stopped member's --data-dir (read-only,
nothing in it is written), a snapshot saved by etcdctl, or a snapshot
streamed from a live member (--endpoints) into a scratch directory under
--dir after its free space is checked, and removed afterwards - and shows
per resource of Kubernetes' key layout the live keys and bytes and the
revisions and bytes kept since the last compaction, the keys with the most
revisions and the largest, the leases, and the file as bbolt counts it (in
use, free pages, fill, revisions, the quota when the member says it).
Findings say what to do: events, Helm history, a key rewritten thousands
of times, fragmentation, the quota. With --predict (the default) it also
predicts on the disk under --dir how long a restart, a defragmentation and
a snapshot sent to a new member take.

Exit codes: 0 nothing calls for action (or only warnings), 1 a finding
FAILs (the quota), 2 bad flags or input (a running member's locked db, no
db in the data dir, a file that is not an etcd db, a truncated or corrupt
db), 3 the run could not be done (too little free space under --dir, a
member that does not answer), 129, 130 or 143 interrupted (SIGHUP, SIGINT,
SIGTERM).`,
		Example: `  etcdbench diagnose data --data-dir /var/lib/etcd --dir /var/lib/etcd-scratch
  etcdbench diagnose data --snapshot backup.db --predict=false
  etcdbench diagnose data --endpoints https://10.0.0.1:2379 --cacert ca.pem --dir /var/tmp -o html > data.html`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := f.resolve(cmd)
			if err != nil {
				return err
			}
			res, err := data.Run(cmd.Context(), c)
			if res == nil {
				return err
			}
			return conclude(cmd.Context(), stdout, f.out.output, res, err)
		},
	}
	f.register(cmd.Flags())
	return cmd
}

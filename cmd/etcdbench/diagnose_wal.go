package main

import (
	"context"
	"io"
	"time"

	"github.com/spf13/cobra"

	"etcdbench/internal/result"
	"etcdbench/internal/run"
	"etcdbench/internal/strace"
	"etcdbench/internal/sysinfo"
	"etcdbench/internal/units"
	"etcdbench/internal/walfile"
)

// procRoot is where processes are looked up.
const procRoot = "/proc"

// diagnoseWALFlags are the raw command-line values of 'diagnose wal'.
type diagnoseWALFlags struct {
	dataDir, duration string
	out               outputFlags
	prog              progressFlags
	pid               int
	yes               bool
}

// newDiagnoseWALCmd is 'etcdbench diagnose wal'.
func newDiagnoseWALCmd(stdout, stderr io.Writer) *cobra.Command {
	f := &diagnoseWALFlags{duration: "10s"}
	cmd := &cobra.Command{
		Use:   "wal [--data-dir DIR | --pid PID --yes]",
		Short: "Show etcd's real WAL write pattern and the disk wal test that matches it",
		Long: `With --data-dir, decodes etcd's WAL segment files offline and read-only (the
data dir, the member dir or the wal dir; nothing is written or locked) and
reports record sizes, entries per save and the bytes etcd writes between two
fdatasyncs. With --pid, or alone to find the one etcd process, traces etcd's
write() and fdatasync() calls with strace for --duration and reports their
sizes and latencies; strace slows etcd down while attached, so it needs --yes.
Both end with the recommended --bs and the 'etcdbench disk wal' command line.` + exitCodesHelp,
		Example: `  etcdbench diagnose wal --data-dir /var/lib/etcd
  etcdbench diagnose wal --pid 1234 --duration 10s --yes
  etcdbench disk wal --dir /var/lib/etcd --bs auto --from-data-dir /var/lib/etcd`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runDiagnoseWAL(cmd.Context(), f, cmd.Flags().Changed, commandLine(cmd), stdout, stderr)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&f.dataDir, "data-dir", "", "read the WAL offline from etcd's data dir, member dir or wal dir")
	fs.IntVar(&f.pid, "pid", 0, "trace this etcd process with strace (default: the one etcd process found in /proc)")
	fs.StringVar(&f.duration, "duration", f.duration, "how long to trace")
	fs.BoolVar(&f.yes, "yes", false, "agree to attach strace, which slows etcd down while it is attached")
	f.out.register(fs)
	f.prog.register(fs)
	return cmd
}

func runDiagnoseWAL(ctx context.Context, f *diagnoseWALFlags, changed func(string) bool, args []string, stdout, stderr io.Writer) error {
	if err := f.out.check(); err != nil {
		return err
	}
	if changed("data-dir") && changed("pid") {
		return run.Usagef("--data-dir and --pid are alternatives: read the WAL offline or trace the process")
	}
	var wl result.Workload
	var walDir string
	if changed("data-dir") {
		if changed("duration") || f.yes {
			return run.Usagef("--duration and --yes go with tracing (--pid), not --data-dir")
		}
		dirs, err := walfile.FindDir(f.dataDir)
		if err != nil {
			return run.Usage(err)
		}
		p, err := walfile.ProfileDir(dirs.WALDir)
		if err != nil {
			return err
		}
		wl, walDir = p.Workload(dirs), dirs.WALDir
	} else {
		d, err := units.ParseDuration(f.duration)
		if err != nil || d <= 0 || d > time.Hour {
			return run.Usagef("--duration %q: want a positive duration up to 1h, e.g. 10s", f.duration)
		}
		pid := f.pid
		if !changed("pid") {
			if pid, err = onlyEtcd(procRoot, "--pid PID, or --data-dir DIR to read a stopped etcd's WAL"); err != nil {
				return err
			}
		} else if pid <= 0 {
			return run.Usagef("--pid must be a process id, got %d", pid)
		}
		progress := f.prog.terminal(stderr, f.out.output)
		if wl, walDir, err = strace.TraceWAL(ctx, procRoot, pid, d, f.yes, progress); err != nil {
			return err
		}
	}
	res := run.NewResult(args)
	res.Environment = sysinfo.Collect("/", walDir)
	res.Workloads = []result.Workload{wl}
	res.Finish(time.Now().UTC())
	return emit(ctx, stdout, f.out.output, []*result.Result{res}, nil)
}

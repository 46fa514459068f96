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

	"etcdbench/internal/etcdproc"
	"etcdbench/internal/result"
	"etcdbench/internal/run"
	"etcdbench/internal/strace"
	"etcdbench/internal/sysinfo"
	"etcdbench/internal/trace"
	"etcdbench/internal/units"
	"etcdbench/internal/walfile"
)

// procRoot is where processes are looked up.
const procRoot = "/proc"

// diagnoseWALFlags are the raw command-line values of 'diagnose wal'.
type diagnoseWALFlags struct {
	dataDir, duration string
	out               outputFlags
	pid               int
	yes               bool
}

// newDiagnoseWALCmd is 'etcdbench diagnose wal'.
func newDiagnoseWALCmd(stdout, stderr io.Writer) *cobra.Command {
	f := &diagnoseWALFlags{duration: "10s"}
	cmd := &cobra.Command{
		Use:   "wal [--data-dir DIR | --pid PID --yes]",
		Short: "etcd's real WAL write pattern (from its segment files, or traced with strace) and the disk wal test that matches it",
		Long: `With --data-dir, decodes etcd's WAL segment files offline and read-only (the
data dir, the member dir or the wal dir; nothing is written or locked) and
reports record sizes, entries per save and the bytes etcd writes between two
fdatasyncs. With --pid, or alone to find the one etcd process, traces etcd's
write() and fdatasync() calls with strace for --duration and reports their
sizes and latencies; strace slows etcd down while attached, so it needs --yes.
Both end with the recommended --bs and the 'etcdbench disk wal' command line.`,
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
			if pid, err = findOneEtcd(); err != nil {
				return err
			}
		} else if pid <= 0 {
			return run.Usagef("--pid must be a process id, got %d", pid)
		}
		if wl, walDir, err = traceWAL(ctx, pid, d, f.yes, stderr); err != nil {
			return err
		}
	}
	res := run.NewResult(args)
	res.Environment = sysinfo.Collect("/", walDir)
	res.Workloads = []result.Workload{wl}
	res.Finish(time.Now().UTC())
	return emit(ctx, stdout, f.out.output, []*result.Result{res}, nil)
}

// findOneEtcd returns the pid of the only etcd process running.
func findOneEtcd() (int, error) {
	ps, err := etcdproc.Find(procRoot)
	if err != nil {
		return 0, err
	}
	switch len(ps) {
	case 0:
		return 0, run.Usagef("no etcd process found in %s; give --pid PID, or --data-dir DIR to read a stopped etcd's WAL", procRoot)
	case 1:
		return ps[0].PID, nil
	}
	var list []string
	for _, p := range ps {
		c := strings.Join(p.Cmdline, " ")
		if len(c) > 60 {
			c = c[:57] + "..."
		}
		list = append(list, fmt.Sprintf("%d (%s)", p.PID, c))
	}
	return 0, run.Usagef("%d etcd processes: %s; choose one with --pid", len(ps), strings.Join(list, "; "))
}

// traceWAL traces process pid's WAL with strace for d.
func traceWAL(ctx context.Context, pid int, d time.Duration, yes bool, stderr io.Writer) (result.Workload, string, error) {
	files, err := etcdproc.ReadFiles(procRoot, pid)
	if err != nil {
		return result.Workload{}, "", err
	}
	if len(files.WAL) == 0 {
		return result.Workload{}, "", fmt.Errorf("process %d has no WAL segment (*.wal) open: is it an etcd server? Give the right --pid", pid)
	}
	dirs, err := walfile.FindDir(files.WALDir)
	if err != nil {
		dirs = walfile.Dirs{WALDir: files.WALDir, DataDir: files.WALDir}
	}
	tool, err := strace.Find(ctx)
	if err != nil {
		return result.Workload{}, "", err
	}
	if !yes {
		return result.Workload{}, "", run.Usagef("strace stops etcd (process %d) at every system call for %s, which can halve its throughput; add --yes to trace it, or read its WAL offline without slowing it: etcdbench diagnose wal --data-dir %s", pid, d, dirs.DataDir)
	}
	tmp, err := os.MkdirTemp("", "etcdbench-strace-")
	if err != nil {
		return result.Workload{}, "", fmt.Errorf("creating a directory for strace's output: %w", err)
	}
	defer os.RemoveAll(tmp)
	if run.IsTerminal(stderr) {
		fmt.Fprintf(stderr, "tracing etcd (process %d) with strace %s for %s...\n", pid, tool.Version, d)
	}
	var fds []int
	for fd := range files.WAL {
		fds = append(fds, fd)
	}
	for fd := range files.DB {
		fds = append(fds, fd)
	}
	for fd := range files.Next {
		fds = append(fds, fd) // the next segment after a cut
	}
	out, err := tool.Run(ctx, pid, d, tmp, fds)
	if err != nil {
		return result.Workload{}, "", err
	}
	fh, err := os.Open(out)
	if err != nil {
		return result.Workload{}, "", fmt.Errorf("reading strace's output: %w", err)
	}
	defer fh.Close()
	p, err := strace.ReadProfile(fh, files)
	if err != nil {
		return result.Workload{}, "", err
	}
	wl, err := p.Workload(pid, files, dirs.DataDir, d)
	if err != nil {
		return result.Workload{}, "", err
	}
	wl.Parameters["strace_version"] = tool.Version
	return wl, dirs.WALDir, nil
}

// errNoBSSource is the usage error of --bs auto without a WAL to read.
var errNoBSSource = errors.New("--bs auto needs a WAL to measure: add --from-data-dir DIR (etcd's data dir) or --from-pid PID (a running etcd)")

// autoBS returns the recommended --bs and where it came from: for a
// running etcd found by its pid, its WAL watched for 5 s by the eBPF
// tracer where it may run, else its open segments' directory decoded
// offline; for a data dir, its WAL decoded offline.
func autoBS(ctx context.Context, fromDataDir string, fromPID int) (int64, string, error) {
	walDir := ""
	switch {
	case fromDataDir != "" && fromPID != 0:
		return 0, "", run.Usagef("--from-data-dir and --from-pid are alternatives: give one")
	case fromDataDir != "":
		dirs, err := walfile.FindDir(fromDataDir)
		if err != nil {
			return 0, "", run.Usage(err)
		}
		walDir = dirs.WALDir
	case fromPID > 0:
		bs, from, ok := tracedBS(ctx, fromPID)
		if ok {
			return bs, from, nil
		}
		files, err := etcdproc.ReadFiles(procRoot, fromPID)
		if err != nil {
			return 0, "", err
		}
		if files.WALDir == "" {
			return 0, "", fmt.Errorf("process %d has no WAL segment (*.wal) open: is it an etcd server?", fromPID)
		}
		walDir = files.WALDir
	default:
		return 0, "", run.Usage(errNoBSSource)
	}
	p, err := walfile.ProfileDir(walDir)
	if err != nil {
		return 0, "", err
	}
	rec, ok := p.Recommend("")
	if !ok {
		return 0, "", fmt.Errorf("--bs auto: the WAL in %s has no write+fdatasync batch yet (a new member); give --bs", walDir)
	}
	return rec.BS, fmt.Sprintf("median %d bytes per write+fdatasync in %s", rec.Median, walDir), nil
}

// bsTraceTime is how long --bs auto --from-pid watches etcd with eBPF.
const bsTraceTime = 5 * time.Second

// tracedBS watches process pid's WAL with the eBPF tracer for bsTraceTime
// and returns the --bs that matches it; ok is false when the tracer cannot
// run here (no privilege) or etcd synced its WAL too few times meanwhile,
// and autoBS decodes the WAL files instead.
func tracedBS(ctx context.Context, pid int) (int64, string, bool) {
	tr, err := trace.Run(ctx, trace.Options{PID: pid, Duration: bsTraceTime})
	if err != nil {
		return 0, "", false
	}
	bs, syncs, ok := tr.RecommendedBS()
	if !ok || syncs < 10 {
		return 0, "", false
	}
	return bs, fmt.Sprintf("the median bytes per WAL write+fdatasync of process %d, %d syncs traced by eBPF over %v", pid, syncs, bsTraceTime), true
}

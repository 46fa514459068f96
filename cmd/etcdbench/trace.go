package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"etcdbench/internal/run"
	"etcdbench/internal/trace"
	"etcdbench/internal/units"
)

// maxTraceDuration bounds a trace: it is meant to be watched, not left
// attached (a periodic run is the way to watch for days).
const maxTraceDuration = 24 * time.Hour

// traceFlags are the flags of `etcdbench trace`.
type traceFlags struct {
	pid      int
	duration string
	out      outputFlags
	prog     progressFlags
}

func newTraceCmd(stdout, stderr io.Writer) *cobra.Command {
	f := &traceFlags{}
	cmd := &cobra.Command{
		Use:   "trace [--pid PID] [--duration 30s]",
		Short: "Watch a live etcd's WAL and db writes and syncs with eBPF, at negligible cost",
		Long: `Attaches eBPF programs to the write, pwrite64, fdatasync and fsync syscall
tracepoints, filtered in the kernel to one etcd process and to its WAL
segments, bbolt database, snapshot files and other files (those open at the
start found in /proc/PID/fd, those opened later classified in the kernel at
their openat), and reports per kind of file: sync latency percentiles at
nanosecond resolution (each call timed in the kernel), write sizes, bytes and
writes between syncs, syncs per second and a per-second series, the WAL sync
p99 judged against etcd's 10 ms limit (WARN, not judged, with fewer than 100
syncs), and the --bs of a 'disk wal' run that matches this etcd. etcd is not
stopped at any call (as strace does); everything is detached at the end (at
most 24h), on Ctrl-C and SIGTERM, and when etcd exits. Needs root (or CAP_BPF
and CAP_PERFMON).` + exitCodesHelp,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := f.out.check(); err != nil {
				return err
			}
			d, err := units.ParseDuration(f.duration)
			if err != nil || d <= 0 || d > maxTraceDuration {
				return run.Usagef("--duration %q: want a positive duration up to %s, such as 30s", f.duration, strings.TrimSuffix(maxTraceDuration.String(), "0m0s"))
			}
			pid, err := tracePID(f.pid, cmd.Flags().Changed("pid"))
			if err != nil {
				return err
			}
			progress := f.prog.terminal(stderr, f.out.output)
			return runTrace(cmd.Context(), pid, d, f.out.output, redactArgs(commandLine(cmd)), stdout, progress)
		},
	}
	fs := cmd.Flags()
	fs.IntVar(&f.pid, "pid", 0, "the etcd process to trace; default: the only etcd process running")
	fs.StringVar(&f.duration, "duration", "30s", "how long to trace (it also ends on Ctrl-C and when etcd exits)")
	f.out.register(fs)
	f.prog.register(fs)
	return cmd
}

// tracePID is the process to trace: --pid, or the only etcd running.
func tracePID(pid int, given bool) (int, error) {
	if !given {
		return onlyEtcd(procRoot, "--pid PID")
	}
	if pid <= 0 {
		return 0, run.Usagef("--pid %d: want a process id", pid)
	}
	return pid, nil
}

// runTrace traces pid and reports; an interrupted trace reports what it
// saw. progress, when not nil, is told that the trace started.
func runTrace(ctx context.Context, pid int, d time.Duration, output string, args []string, stdout, progress io.Writer) error {
	if progress != nil {
		fmt.Fprintf(progress, "tracing etcd (process %d) with eBPF for %s (Ctrl-C ends it early)...\n", pid, d)
	}
	res, err := trace.Measure(ctx, trace.Options{PID: pid, Duration: d}, args)
	if res == nil {
		return err
	}
	return conclude(ctx, stdout, output, res, err)
}

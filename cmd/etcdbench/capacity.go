package main

import (
	"io"
	"time"

	"github.com/spf13/cobra"

	"etcdbench/internal/capacity"
	"etcdbench/internal/capacity/diskmodel"
	"etcdbench/internal/run"
	"etcdbench/internal/units"
)

// newCapacityCmd makes `capacity`: the disk's capacity sweep (the same
// registered workload as `disk capacity`) and the etcd side, an embedded
// etcd on the same storage swept the same way as `etcd capacity`, which
// together estimate the put rate an etcd on this disk and machine
// sustains.
func newCapacityCmd(stdout, stderr io.Writer) *cobra.Command {
	spec, _ := diskmodel.Lookup("capacity")
	cmd, df := workloadCmd(spec, stdout, stderr)
	f := cmd.Flags()
	cpu := f.Bool("cpu", true, "also sweep an embedded etcd on the same storage, fsyncs on (the etcd side, cpu-capacity), up to the disk's limit, and estimate etcd's put rate on this disk and machine; --cpu=false: the disk alone, as 'disk capacity'")
	cpuStep := f.String("cpu-step", "3s", "how long each step of the etcd side's sweep runs (a step that fails only on a p99 its few observations set, or passes with its WAL fsync p99 in the limit's histogram bucket, is held longer, up to 10s)")
	diskRun := cmd.RunE
	cmd.RunE = func(c *cobra.Command, args []string) error {
		if !*cpu {
			return diskRun(c, args)
		}
		step, err := units.ParseDuration(*cpuStep)
		if err != nil || step < time.Second {
			return run.Usagef("--cpu-step %q: want a duration of at least 1s, such as 3s", *cpuStep)
		}
		p, err := df.resolve(c)
		if err != nil {
			return err
		}
		w, err := build(spec, p, df.set(c))
		if err != nil {
			return err
		}
		res, err := capacity.Run(c.Context(), capacity.Config{
			Dir: df.dir.path, Sweep: w, CPU: true, CPUStep: step, RunLonger: runLongerFlag(c, df.presetName),
			Progress: df.prog.terminal(stderr, df.out.output), Args: commandLine(c),
		})
		return conclude(c.Context(), stdout, df.out.output, res, err)
	}
	cmd.Short = "Find the put rate an etcd on this storage and machine carries, and what limits it"
	cmd.Long = `Sweeps the offered write rate on --dir: open-loop WAL steps (entries of
--entry-bytes arrive on a schedule; each write() + fdatasync() carries every
entry waiting, as etcd's WAL batches raft's proposals), a geometric ladder from
--start doubling until the first step fails, then a bisection around the knee
and one probe step above it. Each step runs as long as its own p99 verdict
needs (the adaptive stop rule), with the confidence shared among all steps.

Reports the highest rate that passed (WAL fdatasync p99 < 10 ms and the rate
kept), the curve, what bends it (a sync rate cap, queueing, stalls), and which
of etcdctl check perf's loads (s 150, m 1000, l 8000, xl 15000 puts/s) it
carries, and the cluster sizes of etcd's hardware guide it fits.

Then the etcd side (--cpu, on by default): an embedded etcd in the scratch
directory, its fsyncs on, swept like 'etcd capacity' (--cpu-step per step) up
to the disk's limit: what an etcd carries whose syncs and CPU work share this
machine (with the load generator), as a real etcd's do. The lower side is the
estimate of the put rate an etcd on this disk and machine sustains, and names
what gives out first. Ctrl-C prints the steps
done so far and removes the scratch directory.` + exitCodesHelp
	cmd.Example = `  etcdbench capacity --dir /var/lib/etcd
  etcdbench capacity --dir /var/lib/etcd --quick --cpu=false
  etcdbench capacity --dir . --output json > capacity.json`
	return cmd
}

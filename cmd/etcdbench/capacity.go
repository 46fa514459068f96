package main

import (
	"io"
	"time"

	"github.com/spf13/cobra"

	"etcdbench/internal/capacity"
	"etcdbench/internal/capacity/diskmodel"
	"etcdbench/internal/run"
	"etcdbench/internal/tune"
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
	var apart tune.ApartFlags
	apart.Register(f)
	cpuStep := f.String("cpu-step", "3s", "how long each step of the etcd side's sweep runs (a step that fails only on a p99 its few observations set, or passes with its WAL fsync p99 in the limit's histogram bucket, is held longer, up to 10s)")
	diskRun := cmd.RunE
	cmd.RunE = func(c *cobra.Command, args []string) error {
		each, err := apart.Each()
		if err != nil || !*cpu {
			if err == nil && each != nil {
				err = run.Usagef("--members and --peer-rtt put the etcd side's members apart: they need it (--cpu)")
			}
			if err != nil {
				return err
			}
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
			Progress: df.prog.terminal(stderr, df.out.output), Args: commandLine(c), Apart: each,
		})
		return conclude(c.Context(), stdout, df.out.output, res, err)
	}
	cmd.Short = "Find the put rate an etcd on this storage and machine carries, and what limits it"
	cmd.Long = capacity.Help + exitCodesHelp
	cmd.Example = `  etcdbench capacity --dir /var/lib/etcd
  etcdbench capacity --dir /var/lib/etcd --quick --cpu=false
  etcdbench capacity --dir . --output json > capacity.json`
	return cmd
}

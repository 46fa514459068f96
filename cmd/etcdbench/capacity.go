package main

import (
	"io"

	"github.com/spf13/cobra"

	"etcdbench/internal/disk"
)

// newCapacityCmd makes `capacity`: the disk's capacity sweep (the same
// registered workload as `disk capacity`, at the top level because it
// answers the question operators ask first).
func newCapacityCmd(stdout, stderr io.Writer) *cobra.Command {
	spec, _ := disk.Lookup("capacity")
	cmd := newWorkloadCmd(spec, stdout, stderr)
	cmd.Short = "the highest write rate this disk's WAL carries within etcd's limits, the curve and what bends it"
	cmd.Long = `Sweeps the offered write rate on --dir: open-loop WAL steps (entries of
--entry-bytes arrive on a schedule; each write() + fdatasync() carries every
entry waiting, as etcd's WAL batches raft's proposals), a geometric ladder from
--start doubling until the first step fails, then a bisection around the knee
and one probe step above it. Each step runs as long as its own p99 verdict
needs (the adaptive stop rule), with the confidence shared among all steps.

Reports the highest rate that passed (WAL fdatasync p99 < 10 ms and the rate
kept), the curve, what bends it (a sync rate cap, queueing, stalls), and which
of etcdctl check perf's loads (s 150, m 1000, l 8000, xl 15000 puts/s) it
carries. Ctrl-C prints the steps done so far and removes the scratch directory.`
	cmd.Example = `  etcdbench capacity --dir /var/lib/etcd
  etcdbench capacity --dir /var/lib/etcd --quick
  etcdbench capacity --dir . --output json > capacity.json`
	return cmd
}

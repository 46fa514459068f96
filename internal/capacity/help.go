package capacity

// Help is capacity's long help, before the exit codes.
const Help = `Sweeps the offered write rate on --dir: open-loop WAL steps (entries of
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
what gives out first.

With --members 3 (and --peer-rtt R, or a list 0,2ms,10ms,50ms), the etcd side
then runs again on three embedded members whose peer links hold every byte for
half the round trip each way, a row each (cluster-capacity): what they carry
on this machine, sharing its disk and CPUs, with the puts' p50 and p99 there
and what bends it (the network when each put's wait for the round trip sets
the rate), and a prediction for three machines like this one, each with its
own member. The answer is the first row's. Ctrl-C prints the steps done so far
and removes the scratch directory.`

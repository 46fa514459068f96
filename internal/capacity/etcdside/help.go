package etcdside

// Help is etcd capacity's long help, before the exit codes.
const Help = `Sweeps the put rate of an open loop shaped like etcdctl check perf (new
random 256-byte keys, 1024-byte values, the clients of the smallest check perf
load asking for that rate): a ladder from --start doubling until the first step
fails, a bisection around the knee and a probe above it, each step --step long
with its own keys, deleted after it. A step passes when etcdctl check perf's
rules pass (no failed put, throughput above 90 % of the rate, slowest put at
most 0.5 s, stddev at most 0.1 s, latencies from each put's due time) and the
members' own WAL fsync and backend commit p99 (their /metrics) are within
etcd's limits. Reports the highest passing rate, the rule that failed first,
and the limiting resource named from that step's evidence (each member's CPU
and the machine's, the load generator's, the proposal backlog, leader
changes, the peer round trip): cpu, disk, network, leader, client (an
external cluster's load generator saturated) or unknown, with its figures.

With --members 3 --peer-rtt R (or a list, 0,2ms,10ms,50ms), the sweep runs on
one member first, then on three members R apart for each R: each row says what
they carry on this machine (sharing its disk and CPUs), the puts' p50 and p99
there, and a prediction for three machines like this one, each with its own
member (the one member's answer, bounded by check perf's clients /
(R + its put p50)).`

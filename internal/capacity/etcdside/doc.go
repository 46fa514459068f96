// Package etcdside is `etcd capacity`'s sweep: open-loop puts of
// etcdctl check perf's shape at rising rates on a real etcd, each step
// judged by check perf's rules and the members' own disk histograms, its
// evidence (the members' CPU, the machine's, the load generator's, the
// proposal backlog, the peer round trip, the traced WAL syncs) kept typed
// beside it, and the resource that limits etcd named from that evidence
// as a finding. It is the load etcdrun.Measure runs for `etcd capacity`,
// and the etcd side of `capacity` (package capacity).
package etcdside

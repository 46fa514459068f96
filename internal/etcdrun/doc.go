// Package etcdrun is one measured etcd run, the engine behind `etcd
// put|range|txn|watch|mixed`, `etcd check`, `etcd capacity` and every run
// of `tune`: it starts the session's embedded etcd (scratch/etcd, each
// member in a process of its own, as deployed) or takes a running
// cluster's endpoints, runs a load with the members' metrics scraped
// around it, and stops and removes everything before it returns. Its
// `etcd capacity` sweep (CapacityBench) and limit classifier also serve
// the CPU side of `capacity` (package capacityrun) and the eBPF trace of
// a member (TraceMember) the etcd half of `check`.
package etcdrun

// Package etcdrun is one measured etcd run, the engine behind `etcd
// put|range|txn|watch|mixed`, `etcd check`, `etcd capacity` (whose sweep,
// package capacity/etcdside, is its load) and every run of `tune`: it starts
// the session's embedded etcd (scratch/etcd, each member in a process of
// its own, as deployed) or takes a running cluster's endpoints, runs a
// load with the members' metrics scraped around it, and stops and
// removes everything before it returns.
package etcdrun

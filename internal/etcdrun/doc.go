// Package etcdrun is one measured etcd run, the engine behind `etcd
// put|range|txn|watch|mixed`, `etcd check`, every run of `tune` and the
// etcd half of `check`: it starts an embedded etcd in a scratch directory
// (each member in a process of its own, as deployed) or takes a running
// cluster's endpoints, runs a load with the members' metrics scraped around
// it, and stops and removes everything before it returns.
package etcdrun

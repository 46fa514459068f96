// Package session is one run's phases on the directory under test,
// written once for `check`, `capacity` and the etcd runs: open (the
// directory and its free space checked, the scratch directory created,
// the result started, the live line), the disk workloads in
// scratch/disk (their space freed after them), the embedded etcd in
// scratch/etcd (each member a process of its own, as deployed), and
// close (the result finished or marked interrupted, the etcd stopped,
// the scratch directory removed before anything is reported).
//
// What runs in each phase (which workloads, which loads, how a step is
// judged) stays with the engine that calls it: check, capacity,
// etcdrun.
package session

// Package diskmodel is the disk's capacity workload: the highest write
// rate a storage carries within etcd's limits, found by a sweep (package
// sweep) of open-loop steps of disk's WAL engine at rising offered rates,
// each with etcd's own backend (go.etcd.io/etcd/server's storage/backend,
// fed every put the WAL made durable and committing every 100 ms as
// etcd's) beside it (etcdmodel.go), and what a volume must give for each
// mark (package volume).
//
// It is registered as the disk workload "capacity" (Spec); Specs is
// disk's workloads and it, the one list `etcdbench disk`, check's budgets
// and `etcdbench capacity` take theirs from. Its settings for each of
// disk's presets are here (preset.go), by the preset's name.
package diskmodel

// Package etcdload runs etcd under load and reads what etcd itself
// measured: it starts an embedded etcd (one or three members) in a
// directory on the disk under test, drives put and range requests against
// it or against an external cluster (open or closed loop, HdrHistogram
// latencies, errors by type, per-second series), keeps every key under a
// unique prefix that it deletes afterwards, and turns two scrapes of each
// member's /metrics into the delta of etcd's disk histograms (WAL fsync,
// backend commit), with quantiles computed as Prometheus'
// histogram_quantile does.
//
// One embedded member runs in etcdbench's process; the members of a
// 3-member cluster run in child processes of it (see MaybeRunMember),
// because etcd registers its metrics in the process-wide Prometheus
// registry: so each member's /metrics shows that member alone.
package etcdload

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
// The embedded members share one process and therefore one Prometheus
// registry: every member's /metrics shows the sum over all members of
// the process. Per-member disk figures need an external cluster.
package etcdload

// Package etcdload runs load against etcd and reads what etcd itself
// measured: it drives put and range requests against the endpoints it is
// given (open or closed loop, HdrHistogram latencies, errors by type,
// per-second series), keeps every key under a unique prefix that it
// deletes afterwards, and turns two scrapes of each member's /metrics
// into the delta of etcd's disk histograms (WAL fsync, backend commit),
// with quantiles computed as Prometheus' histogram_quantile does.
//
// It does not start etcd: the endpoints are an external cluster's, or
// those of an embedded one that package etcdcluster started on the disk
// under test, whose /metrics URLs EmbeddedTargets turns into targets.
package etcdload

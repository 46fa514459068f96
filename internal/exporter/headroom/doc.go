// Package headroom sets what `etcdbench capacity` or `check` measured
// of a volume beside what an etcd member on it does now: the saved
// results given to the exporter with --capacity are matched to the
// members on the volume they measured (the same filesystem or block
// device, on the same machine), re-read when they change, and each
// matched member's put rate (etcd_mvcc_put_total from its own /metrics)
// and its device's write IOPS are served as shares of the estimate and
// of the volume's cap. A member whose rate cannot be read gets a reason,
// never a zero. Metric names: docs/exporter.md#headroom.
package headroom

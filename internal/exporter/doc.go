// Package exporter serves what the eBPF tracer (internal/trace) sees of
// every etcd on a machine as Prometheus metrics, for as long as it runs:
// it finds the etcd processes in /proc (again when one restarts or a new
// one starts), attaches a tracer to each in its streaming mode
// (trace.Options.Observer, which keeps no statistics of its own), and
// records each WAL, db, snapshot and other file's syncs into histograms
// (classic buckets from 10 µs and a native histogram), with and without
// the time the syncing thread waited for a CPU, the bytes and writes
// between syncs, and counts of syncs, writes and bytes; at scrape time it
// adds the data dir's device counters from /proc/diskstats.
//
// Every series of one etcd carries its member name and data dir, not its
// process id: a restarted member continues its counters. Memory is
// bounded by the number of members ever seen (a few series each), not by
// time or load. Metric names and labels: docs/exporter.md.
package exporter

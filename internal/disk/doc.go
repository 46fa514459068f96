// Package disk runs etcd's storage I/O patterns on a directory and turns
// what they measure into result.Workload records.
//
// Workloads are registered as data (Specs, in workload.go) with their
// settings and the presets they start from (preset.go):
//
//   - wal (wal.go): what etcd's write-ahead log does on every raft Ready
//     that must be persisted: one write() of the batch at the end of a
//     preallocated segment, then one fdatasync(). Segments are preallocated
//     with fallocate outside the timed path, the next one in the background
//     while the current one is written (segment.go), as etcd's file pipeline
//     does, so appends land in allocated space exactly as they do in etcd
//     and in fio's rw=write recipe. write and fdatasync are raw system calls
//     (rawio.go), timed with a clock read that is no preemption point, and
//     the loop yields between operations before the runtime would preempt
//     it, so the Go scheduler adds nothing to the timed interval.
//   - backend (backend.go): bbolt's commit: sorted scattered page writes,
//     fdatasync, the meta page, fdatasync.
//   - wal-under-load (underload.go): the WAL loop while background writers
//     (bbolt commits every 100 ms, snapshots, defragmentation) share the
//     filesystem, compared with the idle WAL.
//   - mixed (mixed.go, mixed_engines.go): random 4 KiB I/O at queue depth
//     with O_DIRECT, on io_uring (package uring) or pread/pwrite goroutines.
//   - snapshot and compaction (seq.go): large sequential writes, synced at
//     the end or every few MiB.
//   - recovery (recovery.go): a sequential read of a db-sized file and 4 KiB
//     random reads with the page cache defeated.
//
// Latencies that a stop rule judges (fdatasync, commit) are kept in a
// Sampled (sampled.go); the CPU and the device's counters over a run come
// from a Meter (meter.go).
//
// The package keeps to I/O patterns and drives no etcd code: the capacity
// sweep, which runs etcd's own backend beside this package's WAL, is
// package capacity/diskmodel, whose Specs adds it to these.
package disk

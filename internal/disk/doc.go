// Package disk runs etcd's storage I/O patterns on a directory and turns
// what they measure into result.Workload records.
//
// The WAL workload (wal.go) reproduces what etcd's write-ahead log does on
// every raft Ready that must be persisted: one write() of the batch at the
// end of a preallocated segment, then one fdatasync(). Segments are
// preallocated with fallocate outside the timed path, the next one in the
// background while the current one is written (segment.go), as etcd's
// file pipeline does, so appends land in allocated space exactly as they do
// in etcd and in fio's rw=write recipe.
package disk

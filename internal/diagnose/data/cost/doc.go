// Package cost predicts what a member's data costs on the disk under a
// directory: how long the member takes to restart, how long a
// defragmentation blocks it, and how long a snapshot of its db takes to
// send. Predict measures the disk with disk's own workloads (recovery's
// sequential read, snapshot's sequential write made durable) sized by the
// data, and the per-revision CPU of etcd's own code on this machine
// (etcd's mvcc restore and backend defragmentation of a small synthetic
// db, etcd's WAL read back, a real member's start and snapshot), then
// scales each to the data's sizes.
//
// The model follows what etcd (3.4 to 3.7) does:
//
//   - Restart: bbolt opens member/snap/db with MAP_POPULATE (the backend's
//     bolt options on Linux), which reads the whole file, free pages
//     included, in sequence; the freelist is rebuilt from the pages
//     (NoFreelistSync) and mvcc's restore reads every revision of the key
//     bucket and indexes it; then every WAL segment is read and decoded
//     to find the valid snapshots (ValidSnapshotEntries), and the entries
//     since the last snapshot decoded again to be replayed (ReadAll).
//     With a cold page cache: start + db bytes / MAP_POPULATE's read +
//     revisions x restore CPU per revision + WAL bytes / sequential read
//   - (all WAL entries + those since the snapshot) x decode CPU.
//   - Defragmentation: the backend copies every bucket into a new file
//     (bolt options as the db's, so every commit fsyncs), committing every
//     10,000 keys, then renames it over the db and reopens it; the member
//     serves nothing meanwhile. It writes the in-use pages: predicted as
//     in-use bytes at the rate of etcd's own Defrag of a synthetic db of
//     the data's mean revision size on the same disk (median of three).
//   - Snapshot: the leader (or the member etcdctl asks) writes the whole
//     file, free pages included (bbolt's tx.WriteTo), hashing it with
//     SHA-256 and sending it in 32 KiB gRPC messages; the receiver writes
//     it and fsyncs it. The stream, not the disk, is what bounds it on a
//     fast disk: db bytes / the rate of a real snapshot of a small member
//     on the same disk, never below db bytes / disk snapshot's durable
//     write bandwidth.
//
// Assumptions: the page cache is cold at restart (a rebooted node) and
// warm for a defragmentation and a snapshot (a serving member has read
// its db); the data's revisions are all of one mean size.
package cost

// Package cost predicts what a member's data costs on the disk under a
// directory: how long the member takes to restart, how long a
// defragmentation blocks it, and how long a snapshot of its db takes to
// send. Predict measures the disk with disk's own workloads (recovery's
// sequential read, snapshot's sequential write made durable) sized by the
// data, and the per-revision CPU of etcd's own code on this machine
// (etcd's mvcc restore and backend defragmentation of a small synthetic
// db, etcd's WAL read back, a real member's start and its snapshot sent
// to a new member), then scales each to the data's sizes.
//
// The model follows what etcd (3.4 to 3.7) does:
//
//   - Restart: bbolt opens member/snap/db with MAP_POPULATE (the backend's
//     bolt options on Linux), which reads the whole file, free pages
//     included, in sequence; the freelist is rebuilt from the pages
//     (NoFreelistSync) and mvcc's restore reads every revision of the key
//     bucket and indexes it; then every WAL segment is read and its
//     records decoded to find the valid snapshots (ValidSnapshotEntries,
//     entries not unmarshalled), and the entries from the start of the
//     segment that holds the last snapshot decoded again, those after it
//     to be replayed (ReadAll). With a cold page cache: start (an empty
//     member's, its election taken out) + the mean election wait of
//     etcd's defaults + db bytes / MAP_POPULATE's read + revisions x restore CPU per revision + WAL
//     bytes / sequential read + all WAL entries x scan CPU + the
//     replay's entries x decode CPU.
//   - Defragmentation: the backend copies every bucket into a new file
//     (bolt options as the db's, so every commit fsyncs), committing every
//     10,000 keys, then renames it over the db and reopens it; the member
//     serves nothing meanwhile. It writes the in-use pages: predicted as
//     in-use bytes at the rate of etcd's own Defrag of a synthetic db of
//     the data's mean revision size on the same disk (median of three).
//   - Snapshot: a new member (or one too far behind) is sent the
//     leader's db when the leader's raft log no longer holds what it
//     lacks: rafthttp POSTs the raft message and the whole file, free
//     pages included (bbolt's tx.WriteTo through a pipe), to the new
//     member's /raft/snapshot, which saves it as snap/<index>.snap.db
//     and fsyncs it before it answers; the leader's
//     etcd_network_snapshot_send_total_duration_seconds times that, from
//     the POST to the answer. Predicted as db bytes at the rate of the
//     same send on the same disk, timed by the same metric: a member of
//     this process filled with up to 64 MiB (a small --snapshot-count, so
//     that its log is compacted as a real member's is) sends its db to a
//     learner added beside it (median of three); never faster than db
//     bytes / disk snapshot's durable write bandwidth.
//
// Assumptions: the page cache is cold at restart (a rebooted node) and
// warm for a defragmentation and a snapshot (a serving member has read
// its db); the data's revisions are all of one mean size.
package cost

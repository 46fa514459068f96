// Package data is `etcdbench diagnose data`: what fills an etcd, from a
// stopped member's data dir, a saved snapshot or a snapshot streamed
// from a live member into the scratch directory. One pass over bbolt's
// key bucket (every revision kept since the last compaction, in
// revision order) counts each prefix of Kubernetes' key layout (live
// keys and bytes at the latest revision, revisions and bytes of all
// kept), keeping per key only a hash-keyed counter and per top list a
// bounded heap; the lease and meta buckets and bbolt's own counts of
// pages add the leases, the revisions and the file. Rules as data turn
// the figures into findings with what to do (events' TTL, Helm's
// history, a key rewritten thousands of times, fragmentation, the
// quota), and the cost package predicts what the data costs on the disk
// under --dir.
package data

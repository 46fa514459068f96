// Package etcdproc finds running etcd servers under /proc and the files
// each has open that matter to its disk: the WAL segments (and the
// preallocated next one), the bbolt database, raft snapshots and its other
// files, read from /proc/PID/fd with readlink, with no lsof. Every path is
// built from a root (normally /proc) that tests point at a fixture tree.
package etcdproc

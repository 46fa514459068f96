// Package strace traces a running etcd's write and sync calls with the
// strace program and reads what it printed: Find and Tool.Run attach strace
// to a process for a while (stopping it with SIGINT, which detaches and
// leaves etcd running), ParseLine and Parser read its output one line at a
// time (a pure function over the text, fuzzed, joining the halves of a
// call another thread interrupted), and Profile sums the calls on the WAL
// segments and the bbolt db into sizes, latencies and the recommended --bs
// of 'etcdbench disk wal'. The descriptors strace printed without paths are
// looked up in the files etcdproc found open.
package strace

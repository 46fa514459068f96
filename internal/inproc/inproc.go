// Package inproc counts the etcd members that run inside this process, for
// the code that shares the process with them: etcdcluster counts its
// in-process member here, and etcdload leaves GOMAXPROCS alone while one
// runs (the member needs the Ps). It is a package of its own so that the
// launcher and the load generator need not know each other.
package inproc

import "sync/atomic"

// EtcdMembers is the number of etcd members running in this process. It
// is process-wide state because GOMAXPROCS, which it guards, is too.
var EtcdMembers atomic.Int32

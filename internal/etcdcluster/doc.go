// Package etcdcluster starts an embedded etcd of one or three members
// with its data in a given directory (etcdbench's scratch directory on
// the disk under test), on free 127.0.0.1 ports, and stops it again. It
// offers the members' client endpoints and /metrics URLs, their leader
// and the end of their log; what load to put on them is etcdload's job.
//
// One member runs in this process unless Options.OwnProcess; the members
// of a 3-member cluster each run in a child process of their own,
// because etcd registers its metrics in the process-wide Prometheus
// registry: so each member's /metrics shows that member alone. The child
// is this program, re-executed, so MaybeRunMember must be called at the
// start of main (and of TestMain in tests that start such a cluster).
package etcdcluster

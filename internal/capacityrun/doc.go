// Package capacityrun is the engine of `etcdbench capacity`: the disk's
// capacity sweep (disk's capacity workload) and then the CPU side, the
// `etcd capacity` sweep (etcdside.CapacityBench) on an embedded etcd
// whose fsyncs are off, in one session; the lower of the two is the
// estimate of the put rate an etcd on this disk and machine sustains.
package capacityrun
